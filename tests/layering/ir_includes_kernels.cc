// Compiled as part of the ir module by the layering test: ir may not include kernels/ (a higher module), so
// this must fail with "kernels/registry.h: No such file or directory". If it compiles, the build no longer
// enforces the layering.
#include "ir/graph.h"         // its own module: found
#include "kernels/registry.h"  // a higher module: must not be found
