#!/usr/bin/env bash
# Paper 001's accuracy tables in kind (its Tables 1 and 2: ‖b − Ax‖∞ of Jacobi, BiCG and
# BiCGStab on real matrices, CPU vs GPU, single and double precision), plus `mixed` (f32
# solves refined in f64 or double-single) — issue 15. BiCG and BiCGStab with Jacobi
# preconditioning (unpreconditioned BiCGStab diverges on nos6 in both precisions); b = A·1; f32 to rtol 1e-6 (what the
# paper's single-precision runs reach), f64 and mixed to 1e-10. A cell is ‖b − Ax‖∞ of the x
# returned, computed in f64 on the host (`residual_inf` in the JSON); "(n.c.)" marks a solve
# that did not converge (its stop in the JSON), "—" one refused (e.g. a zero diagonal).
#
#   bench/accuracy_001.sh [KRYLOV_BINARY]        # default target/release/krylov
#
# On lavapipe: VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json. The GPU column is
# whatever `--device gpu` picks; NO_F64=1 adds --no-f64 to every GPU run (f64 then errors and
# mixed refines in double-single, as on a GPU without f64).
set -uo pipefail
bin=${1:-target/release/krylov}
matrices=${MATRICES:-"nos6 bcsstk21 mesh1e1 jpwh_991 sherman4 add32 pores_1 pde2961"}
gpu_extra=""
[ "${NO_F64:-0}" = 1 ] && gpu_extra="--no-f64"

cell() {
  # shellcheck disable=SC2086
  pc=none
  [ "$2" != jacobi ] && pc=jacobi
  "$bin" solve "tests/data/$1.mtx" --method "$2" --precond $pc --precision "$3" --device "$4" \
    --rtol "$5" --max-iter 20000 --json $6 2>/dev/null | python3 -c '
import json, sys
text = sys.stdin.read().strip()
if not text:
    print("—")
    sys.exit()
r = json.loads(text.splitlines()[0])
v = r.get("residual_inf")
s = "NaN" if v is None else "%.2e" % v
print(s if r["converged"] else s + " (n.c.)")
'
}

echo "| matrix | precision | Jacobi CPU | Jacobi GPU | BiCG CPU | BiCG GPU | BiCGStab CPU | BiCGStab GPU |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for m in $matrices; do
  for prec in f32 f64 mixed; do
    rtol=1e-10
    [ "$prec" = f32 ] && rtol=1e-6
    row="| $m | $prec |"
    for method in jacobi bicg bicgstab; do
      row="$row $(cell "$m" $method $prec cpu $rtol "") | $(cell "$m" $method $prec gpu $rtol "$gpu_extra") |"
    done
    echo "$row"
  done
done
