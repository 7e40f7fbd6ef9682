# rmsnorm_backward's part of the GPU suite (sourced by tests/gpu_suite.sh): the backward programs' checks
# (tests/gpu_suite_backward.sh), with the Gemma weight offset beside --accumulate.
P=rmsnorm_backward VARIANT="--weight-offset 1"
. tests/gpu_suite_backward.sh
