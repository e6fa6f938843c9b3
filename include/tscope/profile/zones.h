// SPDX-License-Identifier: Apache-2.0
#pragma once
/// Host-code zones: named, timed scopes in the program around the graph functions, so that one
/// profile covers the whole loop (data loading, batching, the training step).
///
///   void load_batch(Batch& batch) {
///     TSCOPE_FUNCTION();                          // a zone named "load_batch"
///     for (Molecule& molecule : batch.molecules) {
///       TSCOPE_ZONE("voxelize");                  // nested: a child of load_batch
///       TSCOPE_ZONE_VALUE("atoms", molecule.atoms.size());
///       ...
///     }
///   }
///
/// Zones record only while zones are enabled: by default when TSCOPE_FLAGS has profile=true, or
/// after set_zones_enabled(true). An off zone costs one relaxed load and one predictable branch;
/// configuring with -DTSCOPE_ZONES=OFF compiles the macros to nothing. Each thread writes
/// fixed-size records into its own buffer without locks. The report's "Host zones" section and
/// zone_recorder.h read them. docs/host_profiling.md is the reference.
///
/// This header includes only the standard library and may be included anywhere.
#include <atomic>
#include <cstdint>

#pragma GCC visibility push(default)

#ifndef TSCOPE_ZONES
#define TSCOPE_ZONES 1
#endif

namespace tscope::profile {

enum class ZoneKind : std::uint8_t {
  Zone,       ///< a timed scope (TSCOPE_ZONE, TSCOPE_FUNCTION)
  Value,      ///< a number attached to the enclosing zone (TSCOPE_ZONE_VALUE)
  Function,   ///< a graph Function call, recorded by the runtime while zones are on
  InputWait,  ///< the consumer waiting for input (TSCOPE_INPUT_WAIT): read by the input verdict
};

/// What a call site is: static, constant data, one per site. Records point at it; names are
/// resolved when the profile is snapshotted. The pointer must stay valid for the process's life
/// (sites made at run time come from intern_zone_site() in zone_recorder.h).
struct ZoneSite {
  const char* name;      ///< the zone's name; for TSCOPE_FUNCTION, the function's
  const char* function;  ///< the enclosing function
  const char* file;
  std::uint32_t line;
  ZoneKind kind;
};

/// Turns recording on or off for every thread (a programmatic switch over the profile flag).
/// A zone that was entered while recording was on is still closed after it is turned off.
void set_zones_enabled(bool enabled) noexcept;
/// Whether zones record now (reads TSCOPE_FLAGS on first use unless set_zones_enabled ran).
[[nodiscard]] bool zones_enabled() noexcept;

namespace detail {
inline constexpr int kZonesUndecided = 0;  // the flags have not been read yet
inline constexpr int kZonesOff = 1;
inline constexpr int kZonesOn = 2;
/// The run-time switch; the only thing an off zone reads.
extern std::atomic<int> g_zone_state;

/// Records the entry of `site`; false when nothing was recorded (zones off, or the thread is
/// exiting), in which case zone_end must not be called.
bool zone_begin(const ZoneSite* site) noexcept;
void zone_end() noexcept;
void zone_value(const ZoneSite* site, double value) noexcept;
/// An input-wait zone's entry: the zone clock in ns, or -1 when nothing was recorded.
std::int64_t input_wait_begin(const ZoneSite* site) noexcept;
/// Its exit: closes the zone and adds the wait to the calling thread's current step (steps.h).
void input_wait_end(std::int64_t start_ns) noexcept;
}  // namespace detail

/// The scope behind TSCOPE_ZONE: enters its site on construction, leaves it on destruction.
class ZoneScope {
 public:
  explicit ZoneScope(const ZoneSite* site) noexcept
      : active_(detail::g_zone_state.load(std::memory_order_relaxed) != detail::kZonesOff &&
                detail::zone_begin(site)) {}
  ~ZoneScope() {
    if (active_) detail::zone_end();
  }
  ZoneScope(const ZoneScope&) = delete;
  ZoneScope& operator=(const ZoneScope&) = delete;

 private:
  bool active_;
};

/// The scope behind TSCOPE_INPUT_WAIT: a zone whose time also counts as the current step's wait
/// for input. Entered once per batch, not in tight loops, so it is out of line.
class InputWaitScope {
 public:
  explicit InputWaitScope(const ZoneSite* site) noexcept
      : start_ns_(detail::g_zone_state.load(std::memory_order_relaxed) != detail::kZonesOff
                      ? detail::input_wait_begin(site)
                      : -1) {}
  ~InputWaitScope() {
    if (start_ns_ >= 0) detail::input_wait_end(start_ns_);
  }
  InputWaitScope(const InputWaitScope&) = delete;
  InputWaitScope& operator=(const InputWaitScope&) = delete;

 private:
  std::int64_t start_ns_;
};

/// Records `value` at `site` (TSCOPE_ZONE_VALUE) when zones are on.
inline void record_zone_value(const ZoneSite* site, double value) noexcept {
  if (detail::g_zone_state.load(std::memory_order_relaxed) != detail::kZonesOff) {
    detail::zone_value(site, value);
  }
}

}  // namespace tscope::profile

#define TSCOPE_ZONE_CONCAT_INNER(a, b) a##b
#define TSCOPE_ZONE_CONCAT(a, b) TSCOPE_ZONE_CONCAT_INNER(a, b)

#if TSCOPE_ZONES
/// A zone named `name` (a string literal) from here to the end of the enclosing scope.
#define TSCOPE_ZONE(name)                                                                       \
  static constexpr ::tscope::profile::ZoneSite TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__){ \
      name, __func__, __FILE__, __LINE__, ::tscope::profile::ZoneKind::Zone};                   \
  const ::tscope::profile::ZoneScope TSCOPE_ZONE_CONCAT(                                        \
      tscope_zone_, __LINE__)(&TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__))
/// A zone named after the enclosing function, to the end of the enclosing scope.
#define TSCOPE_FUNCTION()                                                                       \
  static constexpr ::tscope::profile::ZoneSite TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__){ \
      __func__, __func__, __FILE__, __LINE__, ::tscope::profile::ZoneKind::Zone};               \
  const ::tscope::profile::ZoneScope TSCOPE_ZONE_CONCAT(                                        \
      tscope_zone_, __LINE__)(&TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__))
/// Records a number (converted to double) under `name`, e.g. the batch size or atoms placed.
#define TSCOPE_ZONE_VALUE(name, value)                                                             \
  do {                                                                                             \
    static constexpr ::tscope::profile::ZoneSite TSCOPE_ZONE_CONCAT(tscope_zone_value_, __LINE__){ \
        name, __func__, __FILE__, __LINE__, ::tscope::profile::ZoneKind::Value};                   \
    ::tscope::profile::record_zone_value(&TSCOPE_ZONE_CONCAT(tscope_zone_value_, __LINE__),        \
                                         static_cast<double>(value));                              \
  } while (false)
/// A zone where the training loop waits for its next batch (a queue pop, a pipe read). Its time
/// is the input wait of the step marked next (steps.h) and feeds the input-bound verdict.
#define TSCOPE_INPUT_WAIT(name)                                                                 \
  static constexpr ::tscope::profile::ZoneSite TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__){ \
      name, __func__, __FILE__, __LINE__, ::tscope::profile::ZoneKind::InputWait};              \
  const ::tscope::profile::InputWaitScope TSCOPE_ZONE_CONCAT(                                   \
      tscope_zone_, __LINE__)(&TSCOPE_ZONE_CONCAT(tscope_zone_site_, __LINE__))
/// A zone for a site made at run time (intern_zone_site); the runtime uses it for Function calls.
#define TSCOPE_ZONE_SITE(site_pointer) \
  const ::tscope::profile::ZoneScope TSCOPE_ZONE_CONCAT(tscope_zone_, __LINE__)(site_pointer)
#else
#define TSCOPE_ZONE(name) static_cast<void>(0)
#define TSCOPE_FUNCTION() static_cast<void>(0)
#define TSCOPE_INPUT_WAIT(name) static_cast<void>(0)
// sizeof: the value is not evaluated, yet counts as used (no unused-variable warning).
#define TSCOPE_ZONE_VALUE(name, value) static_cast<void>(sizeof(value))
#define TSCOPE_ZONE_SITE(site_pointer) static_cast<void>(0)
#endif

#pragma GCC visibility pop
