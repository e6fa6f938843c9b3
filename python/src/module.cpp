// SPDX-License-Identifier: Apache-2.0
// tensorscope._core: the extension behind the tensorscope package. The Python modules import it
// and give its functions Theano's names; users do not import it directly.
#include <pybind11/stl.h>

#include "binding.h"
#include "python_site.h"
#include "tscope/version.h"

PYBIND11_MODULE(_core, module) {
  namespace py = pybind11;
  using namespace tscope::python;
  module.doc() = "Bindings of the Tensorscope engine (use `import tensorscope`).";
  bind_errors(module);
  bind_variable(module);
  bind_ops(module);
  bind_nnet(module);
  bind_random(module);
  bind_function(module);
  bind_loop(module);
  bind_profile(module);
  bind_onnx(module);
  module.def("set_package_dir", &set_package_dir,
             "Frames from files under this directory are not user code (creation sites).");
  module.attr("__version__") = tscope::version();
  module.def("caller_site", [] { return python_caller_site().short_string(); },
             "'file.py:line' of the innermost caller outside the package.");
}
