# layernorm_backward's part of the GPU suite (sourced by tests/gpu_suite.sh): the backward programs' checks
# (tests/gpu_suite_backward.sh), with --accumulate its only variant.
P=layernorm_backward VARIANT=
. tests/gpu_suite_backward.sh
