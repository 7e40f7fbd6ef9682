// common.h: the harness shared by layernorm_forward, rmsnorm_forward, batchnorm_forward and the backward programs,
// the one include a program needs. Everything that is not a kernel lives here once, in pieces by concern
// (harness/, included below in dependency order):
//   base.h            C/CUDA headers, exit codes, error checks, dtypes and their tolerances
//   device_helpers.h  for kernel authors: conversions, 16-byte packs, warp/block reductions, Welford merges
//   options.h         the kernel registry a program fills in, the options, --help, --list, the parser, the
//                     checks of the --csv/--json files
//   gpu.h             the GPU's header line and launch helpers for thread-block clusters
//   dispatch.h        the dispatchers' rules of regimes (scripts/tune_dispatch.py) and their lookup
//   partials.h        the backward programs' sums over rows from per-block partials, in a fixed order
//   validate.h        inputs from cuRAND (the same values on the host) and the element-by-element validation
//   measure.h         the GPU clock (CUPTI), the L2 flush, cold timing, the speed-of-light copy
//   cudnn.h           the vendor baseline (kernel 0) where the build found cuDNN
//   report.h          CSV rows and JSON Lines
//   driver.h          bench_main: parse, open the GPU, set up, measure, run and rank the kernels
//
// A program fills in a program_t (its name, defaults, kernels, and the callbacks setup, reference, teardown,
// and optionally check_options and reset) and calls bench_main(). See layernorm_forward.cu for the pattern.
//
// Exit codes: 0 all points OK (or skipped), 1 a validation failure, 2 a bad argument or no usable CUDA
// device, 3 a CUDA/cuRAND error at run time.
#pragma once

#include "harness/base.h"
#include "harness/device_helpers.h"
#include "harness/options.h"
#include "harness/gpu.h"
#include "harness/dispatch.h"
#include "harness/partials.h"
#include "harness/validate.h"
#include "harness/measure.h"
#include "harness/cudnn.h"
#include "harness/report.h"
#include "harness/driver.h"
