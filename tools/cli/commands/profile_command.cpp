// SPDX-License-Identifier: Apache-2.0
// `tscope profile [model.onnx]`: run a built-in training job (the voxel 3-D CNN by default;
// `--model voxel-scan`, `ntm`, `mlp`, `voxel-pipeline` for the others), or inference or (--train)
// training steps of an ONNX model, with the profiler on and print the report (every section:
// function, globals, class, ops, apply, memory, tips); --json also writes it, --trace records and
// writes the timeline, --html writes the HTML report.
#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "onnx_model_commands.h"
#include "tscope/core/error.h"
#include "tscope/models/mlp_training.h"
#include "tscope/models/ntm_training.h"
#include "tscope/models/voxel_cnn_training.h"
#include "tscope/models/voxel_pipeline.h"
#include "tscope/ops/linalg.h"
#include "tscope/profile/atomic_file.h"
#include "tscope/profile/global_profiles.h"
#include "tscope/profile/json_export.h"
#include "tscope/profile/min_peak_search.h"
#include "tscope/profile/report_html.h"
#include "tscope/profile/report_text.h"
#include "tscope/profile/trace_recorder.h"
#include "tscope/profile/zone_recorder.h"
#include "tscope/threads/thread_count.h"
#include "validators.h"

namespace tscope::cli {
namespace {
// A job's configuration with the profiler on and the command line's settings.
template <typename Config>
Config job_config(int steps, std::int64_t batch_size, const std::vector<std::string>& excluded) {
  Config config;
  if (steps > 0) config.steps = steps;
  if (batch_size > 0) config.batch_size = batch_size;
  config.options.profile = true;
  config.options.excluded_rewrites = excluded;
  return config;
}

// A shard directory for the worker processes of one run, removed with what they wrote in it.
class ShardDirectory {
 public:
  ShardDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tscope-pipeline-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw_error(ErrorKind::Io, "could not make a directory for the worker processes' shards: {}",
                  std::strerror(errno));
    }
    path_ = pattern;
    profile::ProfileOptions options = profile::GlobalProfiles::instance().options();
    options.directory = path_;
    profile::GlobalProfiles::instance().set_options(options);
    profile::GlobalProfiles::instance().collect_without_exit_report();
  }
  ~ShardDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ShardDirectory(const ShardDirectory&) = delete;
  ShardDirectory& operator=(const ShardDirectory&) = delete;

 private:
  std::string path_;
};

// The data pipeline job's own settings (--workers, --worker-kind, --filter-atoms, --epochs).
struct PipelineSettings {
  int workers = 1;
  std::string worker_kind = "thread";
  bool filter_atoms = false;
  int epochs = 2;
};

// Runs the named built-in training job with the profiler on; 0 steps or batch keeps its default.
// `excluded` names rewrites to skip (an unknown name is an InvalidArgument listing them).
models::TrainingRun run_builtin_job(const std::string& name,
                                    int steps,
                                    std::int64_t batch_size,
                                    const std::vector<std::string>& excluded,
                                    const PipelineSettings& pipeline) {
  if (name == "voxel-pipeline") {
    auto config = job_config<models::VoxelPipelineConfig>(steps, batch_size, excluded);
    config.workers = pipeline.workers;
    config.worker_kind =
        pipeline.worker_kind == "process" ? data::WorkerKind::Process : data::WorkerKind::Thread;
    config.filter_atoms = pipeline.filter_atoms;
    config.epochs = pipeline.epochs;
    return models::train_voxel_pipeline(config);
  }
  if (name == "ntm") {
    return models::train_ntm(job_config<models::NtmTrainingConfig>(steps, batch_size, excluded));
  }
  if (name == "mlp") {
    return models::train_mlp(job_config<models::MlpTrainingConfig>(steps, batch_size, excluded));
  }
  auto config = job_config<models::VoxelCnnTrainingConfig>(steps, batch_size, excluded);
  config.density_by_scan = name == "voxel-scan";
  return models::train_voxel_cnn(config);
}
}  // namespace

Action add_profile_command(CLI::App& app) {
  struct Settings {
    std::string builtin = "voxel";
    int steps = 0;                // 0: the job's default (voxel 10, ntm 10, mlp 20)
    std::int64_t batch_size = 0;  // 0: the job's default (voxel 8, ntm 16, mlp 64)
    int n_ops = 20;
    int n_apply = 20;
    bool distribution = false;
    bool io = false;
    bool min_peak = false;
    bool optimizer = false;
    bool by_signature = false;
    std::string json_path;
    std::string trace_path;
    std::string html_path;
    std::vector<std::string> excluded_rewrites;
    OnnxModelSettings model;
    OnnxProfileSettings inference;
    OnnxTrainSettings train;
    PipelineSettings pipeline;
  };
  auto settings = std::make_shared<Settings>();
  CLI::App* command = app.add_subcommand(
      "profile",
      "Run a built-in training job (a 3-D CNN on molecular voxel grids, a loop network, or an "
      "MLP), or inference (or, with --train, training steps) "
      "of an ONNX model, with the profiler on and print the profile");
  command->add_option("model", settings->model.model_path,
                      "an .onnx model to profile (default: a built-in training job, see --model)");
  command
      ->add_option(
          "--model", settings->builtin,
          "built-in training job: voxel (3-D CNN, 16^3 grid, batch 8), voxel-scan (the same "
          "CNN, its density grid built by a loop over atoms), ntm (a Neural-Turing-"
          "Machine-like loop on the copy task, 20 steps, batch 16), mlp "
          "(784-512-512-10, batch 64) or voxel-pipeline (the CNN on 21^3 images that a data "
          "loader voxelises from molecules on the host; 2 epochs of 8 steps, batch 16)")
      ->check(CLI::IsMember({"voxel", "voxel-scan", "ntm", "mlp", "voxel-pipeline"}));
  command
      ->add_option("--workers", settings->pipeline.workers,
                   "voxel-pipeline: data loader workers (0: load on the training thread)")
      ->check(non_negative());
  command
      ->add_option("--worker-kind", settings->pipeline.worker_kind,
                   "voxel-pipeline: the workers are threads or forked processes")
      ->check(CLI::IsMember({"thread", "process"}));
  command->add_flag("--filter-atoms", settings->pipeline.filter_atoms,
                    "voxel-pipeline: discard atoms that cannot reach the image before placing "
                    "them");
  command->add_option("--epochs", settings->pipeline.epochs, "voxel-pipeline: epochs")
      ->check(positive());
  command->add_option("--iters", settings->inference.iterations, "timed inferences (ONNX model)")
      ->check(positive());
  command
      ->add_option("--warmup", settings->inference.warmup,
                   "untimed inferences before them (ONNX model); with --train, the first "
                   "steps left out of the timings (default 1)")
      ->check(non_negative());
  add_onnx_model_options(command, settings->model);
  add_onnx_train_options(command, settings->train, /*save_model=*/true);
  command
      ->add_option("--steps", settings->steps,
                   "training steps (ONNX model with --train: default 10)")
      ->check(positive());
  command->add_option("--batch", settings->batch_size, "batch size")->check(positive());
  command->add_option("--n-ops", settings->n_ops, "rows in the Class and Ops tables")
      ->check(positive());
  command->add_option("--n-apply", settings->n_apply, "rows in the Apply table")
      ->check(positive());
  command->add_flag("--dist", settings->distribution,
                    "add min/max time columns to the Apply table");
  command->add_flag("--io", settings->io,
                    "print dtype/shape/strides of every node's inputs and outputs");
  command->add_flag("--optimizer", settings->optimizer,
                    "print the Optimizer Profile: time and applications of each rewrite (also "
                    "TSCOPE_FLAGS=profile_optimizer=true)");
  command->add_flag("--by-signature", settings->by_signature,
                    "list every node's time per input signature (dtypes, shapes, strides)");
  command->add_flag("--min-peak", settings->min_peak,
                    "search the minimum memory peak over all valid node orders (1 s budget; "
                    "also TSCOPE_FLAGS=profiling.min_peak_memory=true)");
  command->add_option("--json", settings->json_path,
                      "also write the profile as JSON (docs/profiler_formats.md) to this file");
  command->add_option("--trace", settings->trace_path,
                      "also record a timeline of every node, call and zone and write it to this "
                      "file in the Chrome trace format (open in ui.perfetto.dev; docs/viewing.md)");
  command->add_option("--html", settings->html_path,
                      "also write the report as one self-contained HTML page (with --trace, its "
                      "timeline too) to this file");
  command->add_option("--exclude-rewrite", settings->excluded_rewrites,
                      "skip this rewrite of a built-in job (repeatable; names as in the Optimizer "
                      "Profile, e.g. fuse_elementwise), to see what it gains");
  return [command, settings]() {
    if (!command->parsed()) return -1;
    const bool min_peak = settings->min_peak || profile::process_flags().min_peak_memory;
    profile::TextReportOptions report = profile::report_options(profile::process_flags());
    report.n_ops = settings->n_ops;
    report.n_apply = settings->n_apply;
    report.show_io = settings->io;
    report.show_distribution = settings->distribution;
    report.show_memory = true;
    report.show_optimizer = report.show_optimizer || settings->optimizer;
    report.show_signatures = settings->by_signature;
    // Before the run, which may take long: a path that cannot be written fails now.
    if (!settings->html_path.empty()) profile::check_output_path(settings->html_path);
    if (!settings->trace_path.empty()) {
      profile::check_output_path(settings->trace_path);
      profile::set_tracing(true);
    }
    if (settings->train.train && settings->model.model_path.empty()) {
      throw_error(ErrorKind::InvalidArgument,
                  "--train trains an ONNX model: give the .onnx file (the built-in jobs --model "
                  "always train)");
    }
    if (!settings->model.model_path.empty()) {
      settings->inference.json_path = settings->json_path;
      settings->inference.trace_path = settings->trace_path;
      settings->inference.html_path = settings->html_path;
      settings->inference.min_peak = min_peak;
      if (settings->train.train) {
        constexpr int kDefaultOnnxSteps = 10;
        return profile_onnx_training(settings->model, settings->train, settings->inference,
                                     settings->steps > 0 ? settings->steps : kDefaultOnnxSteps,
                                     report);
      }
      return profile_onnx_model(settings->model, settings->inference, report);
    }
    // The built-in jobs run on the same libraries: --threads holds them to one core too.
    if (settings->model.threads > 0) {
      threads::set_thread_count(settings->model.threads);
    }
    // The pipeline job's report covers the host code around the graph: zones record, and worker
    // processes write shards into a directory of this run, merged into the report below.
    const bool host_zones = settings->builtin == "voxel-pipeline";
    std::optional<ShardDirectory> shards;
    if (host_zones) shards.emplace();
    const models::TrainingRun run =
        run_builtin_job(settings->builtin, settings->steps, settings->batch_size,
                        settings->excluded_rewrites, settings->pipeline);
    profile::Profile profile = run.train->collector()->snapshot();
    if (host_zones) {
      profile.host = profile::snapshot_host_zones();
      profile.host.zone_overhead_ns = profile::measure_zone_overhead_ns();
      std::vector<profile::Profile> merged = {profile};
      profile::GlobalProfiles::instance().merge_worker_shards_into(merged);
      profile = std::move(merged.front());
    }
    profile.blas = blas_description();
    profile.openmp = threads::describe_threads();
    if (min_peak) profile::add_min_peaks(profile);
    profile::TraceRecord trace;
    if (!settings->trace_path.empty()) {
      profile.trace = profile::write_trace(settings->trace_path, &trace);
    }
    std::cout << profile::render_text(profile, report);
    if (!settings->html_path.empty()) {
      profile::write_file_atomically(
          settings->html_path,
          profile::render_html(profile,
                               {.n_chart_rows = report.n_ops,
                                .trace = settings->trace_path.empty() ? nullptr : &trace}));
    }
    if (!settings->json_path.empty()) {
      profile::write_file_atomically(settings->json_path, profile::to_json_text({profile}, report));
    }
    std::cout << fmt::format("Training loss: first step {:.4f}, last step {:.4f} ({} steps)\n",
                             run.losses.front(), run.losses.back(), run.losses.size());
    return 0;
  };
}

}  // namespace tscope::cli
