# Builds layernorm_forward (and every other *_forward.cu and *_backward.cu) from one common.h.
#   make            build for the GPU found by nvidia-smi, or for sm_80/89/90/100/120 + PTX when none (CI=true: never asks)
#   make test       build, CPU tests (at 1 and 16 OpenMP threads), CLI and script tests, two planted-bug builds a
#                   program; where a GPU is present the quick GPU suite. Builds run in parallel (one job a core).
#   make test-full  the same with all planted-bug builds and the whole GPU suite (every shape, every sanitizer tool)
#   make test-build what make test runs, built, without running it (where GPU time is short: build first, then test)
#   make run        build, then ./layernorm_forward with its defaults
#   make profile OP=layernorm KERNEL=7 [ARGS="-C 4096"]   Nsight Compute on one kernel (OP=layernorm_backward: its program)
#   make sass [OP=layernorm]                               SASS of the program (16-byte loads? spills?)
#   make plant      the test builds with planted bugs (build/<op>_forward_bug<k>)
#   make clean

NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
PYTHON ?= python3

SRCS := $(sort $(wildcard *_forward.cu *_backward.cu))
PROGRAMS := $(SRCS:.cu=)
PLANT_BUGS := 1 2 3 4

# ---- GPU architecture: the GPU present, else a fixed list with PTX for newer GPUs
ifeq ($(CI),true)
  GPU_CC :=
else
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
endif
ifneq ($(GPU_CC),)
  ARCH_FLAGS := -gencode arch=compute_$(GPU_CC),code=sm_$(GPU_CC)
  HAVE_GPU := 1
else
  # the GPUs users bring: A100, L40/RTX 40, H100/H200, B200, RTX 50; PTX of the newest for the ones after
  ARCH_FLAGS := $(foreach a,80 89 90 100 120,-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_120,code=compute_120
  HAVE_GPU := 0
endif
# Test builds (planted bugs, CPU test binary) need one architecture only.
TEST_CC := $(or $(GPU_CC),90)
TEST_ARCH := -gencode arch=compute_$(TEST_CC),code=sm_$(TEST_CC)

# ---- cuDNN (optional): the CUDA directory, or the Python package nvidia-cudnn(-cu13/-cu12)
CUDNN_DIR := $(shell \
  if [ -f "$(CUDA_HOME)/include/cudnn.h" ]; then echo "$(CUDA_HOME)"; \
  else $(PYTHON) -c "import nvidia.cudnn as m; print(list(m.__path__)[0])" 2>/dev/null; fi)
ifneq ($(CUDNN_DIR),)
  CUDNN_LIBDIR := $(firstword $(wildcard $(CUDNN_DIR)/lib64/libcudnn.so* $(CUDNN_DIR)/lib/libcudnn.so*))
  CUDNN_LIBDIR := $(patsubst %/,%,$(dir $(CUDNN_LIBDIR)))
endif
ifneq ($(CUDNN_LIBDIR),)
  CUDNN_SONAME := $(notdir $(firstword $(wildcard $(CUDNN_LIBDIR)/libcudnn.so $(CUDNN_LIBDIR)/libcudnn.so.*)))
  CUDNN_CFLAGS := -DHAVE_CUDNN -I$(CUDNN_DIR)/include
  CUDNN_LDFLAGS := -L$(CUDNN_LIBDIR) -Xlinker -rpath=$(CUDNN_LIBDIR) \
                   $(if $(filter libcudnn.so,$(CUDNN_SONAME)),-lcudnn,-l:$(CUDNN_SONAME))
endif

# ---- CUPTI (the GPU clock of the timed launches; optional: without it the programs time with CUDA events):
# the CUDA directory or its extras/CUPTI. CUPTI= (empty) builds without it.
CUPTI ?= $(firstword $(foreach d,$(CUDA_HOME) $(CUDA_HOME)/extras/CUPTI,$(if $(wildcard $(d)/include/cupti.h),$(d))))
ifneq ($(CUPTI),)
  CUPTI_LIBDIR := $(firstword $(foreach d,lib64 lib targets/x86_64-linux/lib targets/sbsa-linux/lib,\
                    $(if $(wildcard $(CUPTI)/$(d)/libcupti.so),$(CUPTI)/$(d))))
endif
ifneq ($(CUPTI_LIBDIR),)
  CUPTI_CFLAGS := -DHAVE_CUPTI -I$(CUPTI)/include
  CUPTI_LDFLAGS := -L$(CUPTI_LIBDIR) -Xlinker -rpath=$(CUPTI_LIBDIR) -lcupti
endif

# The commit measured (written into every CSV row); pass GIT_REV=... where the tree travels without .git.
GIT_REV ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# --default-stream per-thread: the default stream every launch goes to can be captured in a CUDA graph (--hot)
NVCC_FLAGS := -O3 -std=c++17 -lineinfo --threads 0 --default-stream per-thread -Xcompiler -fopenmp,-Wall,-Wno-unused-function,-Wno-unknown-pragmas \
              -DGIT_REV=\"$(GIT_REV)\" $(CUDNN_CFLAGS) $(CUPTI_CFLAGS)
LDLIBS := -lcurand -lgomp -ldl $(CUDNN_LDFLAGS) $(CUPTI_LDFLAGS)

.PHONY: all test test-build test-full run profile sass plant clean info venv plots regress readme
all: $(PROGRAMS)

HARNESS := common.h $(wildcard harness/*.h)
$(PROGRAMS): %: %.cu $(HARNESS) Makefile
	$(NVCC) $(NVCC_FLAGS) $(ARCH_FLAGS) -o $@ $< $(LDLIBS)

# ---- tests
# Every target builds in parallel, one job a core (plain `make`, `make test` too): make test builds 13 programs
# with nvcc (test-full 19), each 15-30 s of one core. A -j on the command line wins; with `clean` among the goals
# the build stays sequential (clean would race with it).
NPROC := $(shell nproc 2>/dev/null || echo 4)
ifeq ($(filter clean,$(MAKECMDGOALS))$(filter -j% --jobs%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(NPROC)
endif

build:
	mkdir -p build

# Planted-bug builds of every program: tests/plant/<prog>_bug<k>.patch applied to a copy of the program under
# build/plant/ (the product files carry no test hooks; each patch says which kernel it breaks). --fuzz=0: a patch that
# no longer fits the source fails the build instead of landing somewhere else.
PLANTED := $(foreach p,$(PROGRAMS),$(foreach b,$(PLANT_BUGS),build/$(p)_bug$(b)))
define PLANT_RULE
build/$(1)_bug$(2): $(1).cu tests/plant/$(1)_bug$(2).patch $$(HARNESS) Makefile | build
	mkdir -p build/plant
	patch --quiet --fuzz=0 -o build/plant/$(1)_bug$(2).cu $(1).cu tests/plant/$(1)_bug$(2).patch
	$$(NVCC) $$(NVCC_FLAGS) $$(TEST_ARCH) -I. -o $$@ build/plant/$(1)_bug$(2).cu $$(LDLIBS)
endef
$(foreach p,$(PROGRAMS),$(foreach b,$(PLANT_BUGS),$(eval $(call PLANT_RULE,$(p),$(b)))))
plant: $(PLANTED)

# CPU test binaries: tests/test_cpu*.cu (each includes its program with NORM_NO_MAIN).
CPU_TESTS := $(patsubst tests/%.cu,build/%,$(wildcard tests/test_cpu*.cu))
build/test_cpu%: tests/test_cpu%.cu tests/test_util.h $(HARNESS) $(SRCS) Makefile | build
	$(NVCC) $(NVCC_FLAGS) $(TEST_ARCH) -o $@ $< $(LDLIBS)

build/test_gpu_inputs: tests/test_gpu_inputs.cu $(HARNESS) Makefile | build
	$(NVCC) $(NVCC_FLAGS) $(TEST_ARCH) -o $@ $< $(LDLIBS)

# make test builds and runs QUICK_BUGS of each program's planted bugs (1: an element never written, 3: a wrong eps
# or variance, a small arithmetic error: the validator's poisoning and its tolerance); make test-full all of them.
QUICK_BUGS := 1 3
TEST_BUILDS := all $(CPU_TESTS) build/test_gpu_inputs venv
test-build: $(TEST_BUILDS) $(foreach p,$(PROGRAMS),$(foreach b,$(QUICK_BUGS),build/$(p)_bug$(b)))
# BUILD_S: the build's seconds, for the tests' last lines: from make's start (TEST_T0, read once as make reads this
# file) to the tests' recipe, which runs when every prerequisite is built, whatever -j
TEST_T0 := $(shell date +%s)
test: test-build
	HAVE_GPU=$(HAVE_GPU) SUITE_BUGS="$(QUICK_BUGS)" BUILD_S=$$(( $$(date +%s) - $(TEST_T0) )) bash tests/run_tests.sh quick
test-full: $(TEST_BUILDS) plant
	HAVE_GPU=$(HAVE_GPU) SUITE_BUGS="$(PLANT_BUGS)" BUILD_S=$$(( $$(date +%s) - $(TEST_T0) )) bash tests/run_tests.sh full

# ---- scripts: matplotlib in a virtual environment (the rest of scripts/ needs only the standard library).
# It is installed from PyPI over the network, which the one line printed when it is done says; where it cannot be
# (offline), that line says that plots are skipped (pip's output: build/venv.log). One whole line, printed at
# the end: under make -j a line begun before the install would be cut by the other jobs' output. Nothing else
# depends on it.
VENV := .venv
$(VENV)/.installed: scripts/requirements.txt
	@rm -rf $(VENV); mkdir -p build
	@if $(PYTHON) -m venv $(VENV) >build/venv.log 2>&1 && \
	    PIP_DEFAULT_TIMEOUT=10 $(VENV)/bin/pip install -q --retries 1 -r scripts/requirements.txt >>build/venv.log 2>&1; \
	 then touch $@; echo "venv: installed matplotlib from PyPI (network) into $(VENV) for the plots"; \
	 else rm -rf $(VENV); \
	   echo "venv: matplotlib could not be installed from PyPI (offline? build/venv.log): plots are skipped"; fi
venv: $(VENV)/.installed

# README_GPU: the results folder whose numbers the README shows
README_GPU ?= h200
# every GPU folder of results/ (a folder with CSVs); without matplotlib (the
# venv line above said why): nothing to do
plots: venv
	@py=$(PYTHON); if [ -x $(VENV)/bin/python ]; then py=$(VENV)/bin/python; fi; \
	 if $$py -c 'import matplotlib' 2>/dev/null; then \
	   for d in results/*/; do ls $$d*.csv >/dev/null 2>&1 || continue; \
	     $$py scripts/plot.py $$d || exit 1; done; fi
regress: all venv
	$(PYTHON) scripts/regress.py
readme:
	$(PYTHON) scripts/run_all.py --summary-only
	$(PYTHON) scripts/update_readme.py results/$(README_GPU)

run: all
	./layernorm_forward

# make profile: OP's KERNEL under Nsight Compute; without KERNEL, the op's dispatcher (the last line of --list); the clocks
# left as they run (--clock-control none: ncu would lock them to base, unlike the timed runs)
OP ?= layernorm
KERNEL ?=
ARGS ?=
NCU ?= ncu
# OP's program (layernorm -> layernorm_forward; a backward op is its program's name) and the names of its kernels
# (the backward programs' start lnb_ or rmb_, and their partials' sum is the harness's sum_partials_kernel)
PROG = $(if $(filter %_backward,$(OP)),$(OP),$(OP)_forward)
KERNEL_RE = $(if $(filter layernorm_backward,$(OP)),lnb_|sum_partials,$(if $(filter rmsnorm_backward,$(OP)),rmb_|sum_partials,$(OP)))
profile: all
	@k='$(KERNEL)'; [ -n "$$k" ] || k=$$(./$(PROG) --list | tail -n 1 | awk '{print $$1}'); \
	 echo "$(NCU) --set full --clock-control none -k 'regex:$(KERNEL_RE)' ./$(PROG) $$k --check $(ARGS)"; \
	 $(NCU) --set full --clock-control none -k 'regex:$(KERNEL_RE)' ./$(PROG) $$k --check $(ARGS)

# cuobjdump: the toolkit's beside nvcc, else the one on PATH; a toolkit without it stops make sass at once, in one line
CUOBJDUMP ?= $(or $(wildcard $(CUDA_HOME)/bin/cuobjdump),cuobjdump)
ifneq ($(filter sass,$(MAKECMDGOALS)),)
  ifeq ($(shell command -v $(CUOBJDUMP) 2>/dev/null),)
    $(error make sass needs cuobjdump, which this CUDA toolkit lacks ($(CUOBJDUMP) not found; CUOBJDUMP=PATH names one))
  endif
endif
sass: $(PROG)
	$(CUOBJDUMP) -sass ./$(PROG)

info:
	@echo "nvcc:  $(NVCC)"; echo "arch:  $(ARCH_FLAGS)"; echo "gpu:   $(if $(GPU_CC),sm_$(GPU_CC),none)"
	@echo "cudnn: $(if $(CUDNN_LIBDIR),$(CUDNN_DIR) ($(CUDNN_SONAME)),not found)"
	@echo "cupti: $(if $(CUPTI_LIBDIR),$(CUPTI_LIBDIR),not found (timing with CUDA events))"

clean:
	rm -rf $(PROGRAMS) build
