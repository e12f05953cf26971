"""pytorch/examples' CPU scripts that need no download, run unmodified on fgrad (issue 26).

Each script runs twice in a fresh interpreter from its own folder: with real PyTorch, and with
`torch` resolved to fgrad.torch by the alias `python -m fgrad.run` installs. Both runs start from
`torch.manual_seed(0)` (regression/main.py seeds nothing itself; the others reseed), so the
losses they print must agree to float tolerance, line by line (tests/torch/test_corpus.py's
comparison). Timings the scripts print are masked. Settings are small: word_language_model
trains two epochs of a 16-unit model on the first lines of wikitext-2's validation file (the
clone does not hold train.txt), time_sequence_prediction takes one LBFGS step on its full data
(the longest run, minutes on two cores); the seven are the non-fx examples that need no
download, GPU or extra package (five word_language_model variants, regression,
time_sequence_prediction).

Scripts that fail under fgrad today are strict xfails with the missing piece as the reason.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.torch.test_corpus import _env, first_difference, normalise

from .sources import export_example

pytestmark = pytest.mark.slow

TIMEOUT = 900  # time_sequence_prediction: one run took over 4 minutes on two loaded cores

# Runs argv[1:] as `python script args` would, after seeding; with "fgrad" first, `torch` is fgrad.torch.
RUNNER = r"""
import runpy, sys
if sys.argv[1] == "fgrad":
    from fgrad.torch import _alias
    _alias.install()
import torch
torch.manual_seed(0)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

# lr 1, not the default 20: with 16 hidden units, steps of 20 amplify float rounding (the order of
# a sum's terms) into different losses within 20 batches, in either library run twice on
# different BLAS builds; at lr 1 the runs agree to the printed digits.
_WLM = ["--epochs", "2", "--emsize", "16", "--nhid", "16", "--nlayers", "2", "--bptt", "10",
        "--batch_size", "8", "--log-interval", "10", "--lr", "1", "--save", "model.pt"]

# name -> (folder in pytorch/examples, script, arguments)
EXAMPLES: dict[str, tuple[str, str, list[str]]] = {
    "regression": ("regression", "main.py", []),
    "time_sequence_prediction": ("time_sequence_prediction", "train.py", ["--steps", "1"]),
    **{f"word_language_model_{kind}": ("word_language_model", "main.py", _WLM + ["--model", kind])
       for kind in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU", "Transformer")},
}

# name -> why it fails under fgrad today
XFAIL: dict[str, str] = {
    "regression": "float32 rounding: x ** 4 (torch: SLEEF's vectorised powf) and sums (torch: cascade "
                  "sums over vector lanes) differ from fgrad's in the last bit; the script's unseeded "
                  "stopping rule (loss < 1e-3 after hundreds of lr-0.1 steps on x^4 features) turns "
                  "that into a different batch count and learned polynomial. PyTorch itself does the same "
                  "across its own CPU code paths: ATEN_CPU_CAPABILITY=avx512 or avx2 stops after 758 "
                  "batches, =default after 942 (fgrad: 834), with the same data",
}

_TIMING = re.compile(r"(ms/batch|time:)\s*[\d.]+")


def _prepare(name: str, folder: Path) -> None:
    """Make the data a script reads (what the example's README says to generate or download)."""
    if name == "time_sequence_prediction":
        subprocess.run([sys.executable, "generate_sine_wave.py"], cwd=folder, check=True, env=_env(),
                       capture_output=True, timeout=TIMEOUT)
    elif name.startswith("word_language_model"):
        data = folder / "data" / "wikitext-2"
        lines = (data / "valid.txt").read_text(encoding="utf8").splitlines(keepends=True)
        (data / "train.txt").write_text("".join(lines[:150]), encoding="utf8")
        (data / "valid.txt").write_text("".join(lines[150:200]), encoding="utf8")
        (data / "test.txt").write_text("".join(lines[200:250]), encoding="utf8")


def run_example(name: str, lib: str, folder: Path) -> subprocess.CompletedProcess:
    """Run example `name` from `folder` with real torch (lib="torch") or fgrad.torch (lib="fgrad")."""
    _, script, args = EXAMPLES[name]
    env = _env()
    env["MPLBACKEND"] = "Agg"
    if name == "time_sequence_prediction":
        # its data file is a pickled NumPy array, which torch >= 2.6 loads only with weights_only off
        env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    return subprocess.run([sys.executable, "-c", RUNNER, lib, script, *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)


def _lines(text: str, lib: str) -> list[str]:
    return [_TIMING.sub(r"\1 ?", line) for line in normalise(text, lib)]


def compare_example(name: str, tmp: Path) -> str | None:
    """None when both runs print the same losses, else what went wrong."""
    folder = export_example(EXAMPLES[name][0], tmp)
    _prepare(name, folder)
    ref = run_example(name, "torch", folder)
    if ref.returncode != 0:
        return f"the example fails under real torch (a harness bug):\n{ref.stderr[-3000:]}"
    got = run_example(name, "fgrad", folder)
    if got.returncode != 0:
        return f"fgrad run failed:\n{got.stderr[-3000:]}\nstdout so far:\n{got.stdout[-1500:]}"
    return first_difference(_lines(ref.stdout, "torch"), _lines(got.stdout, "fgrad"), 1e-4, 1e-6, limit=3)


def test_timings_are_masked():
    line = "| end of epoch   1 | time:  0.51s | valid loss  7.01 | ms/batch 12.30 |"
    assert _lines(line, "torch") == ["| end of epoch   1 | time: ?s | valid loss  7.01 | ms/batch ? |"]


@pytest.mark.parametrize("name", [pytest.param(n, id=n, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[n])]
                                               if n in XFAIL else []) for n in EXAMPLES])
def test_example(name, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    problem = compare_example(name, tmp_path)
    assert problem is None, problem


if __name__ == "__main__":  # python -m tests.pytorch_scripts.test_examples [NAME ...]
    import tempfile
    import time
    for name in sys.argv[1:] or list(EXAMPLES):
        with tempfile.TemporaryDirectory() as tmp:
            t = time.time()
            problem = compare_example(name, Path(tmp))
        print(f"{'ok' if problem is None else 'FAIL'} {name} ({time.time() - t:.0f} s)")
        if problem:
            print("   ", problem.replace("\n", "\n    "))
