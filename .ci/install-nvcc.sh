#!/usr/bin/env bash
# Installs a CUDA 13.0 compiler (nvcc), the runtime's headers and static library, and CCCL
# from NVIDIA's PyPI wheels into a virtualenv, for machines without a CUDA toolkit (CI has no
# GPU and needs none: the cuda feature is compiled, not run). Prints the exports to eval.
#
# usage: eval "$(.ci/install-nvcc.sh [DIR])"     # DIR defaults to ~/.cache/cuzk-nvcc-13.0
set -euo pipefail
dir=${1:-$HOME/.cache/cuzk-nvcc-13.0}
if [ ! -x "$dir/bin/python" ]; then
  if ! python3 -m venv "$dir" >&2; then
    # Debian splits venv out of python3.
    rm -rf "$dir"
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq >&2 && $sudo apt-get install -y -qq python3-venv >&2
    python3 -m venv "$dir" >&2
  fi
fi
root=$("$dir/bin/python" -c 'import sys,os;print(os.path.join(sys.prefix,"lib","python%d.%d"%sys.version_info[:2],"site-packages","nvidia","cu13"))')
if [ ! -x "$root/bin/nvcc" ]; then
  # Every piece pinned to 13.0: left free, nvvm and crt move to newer minors than nvcc.
  "$dir/bin/pip" install -q --disable-pip-version-check \
    "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-cccl==13.0.*" \
    "nvidia-nvvm==13.0.*" "nvidia-cuda-crt==13.0.*" >&2
fi
# The cc crate looks for the runtime library under <nvcc>/../targets/x86_64-linux/lib; the
# wheels put it under <root>/lib.
mkdir -p "$root/targets/x86_64-linux"
[ -e "$root/targets/x86_64-linux/lib" ] || ln -s ../../lib "$root/targets/x86_64-linux/lib"
[ -e "$root/targets/x86_64-linux/include" ] || ln -s ../../include "$root/targets/x86_64-linux/include"
echo "export CUDA_PATH=$root NVCC=$root/bin/nvcc PATH=$root/bin:\$PATH"
