"""The agreement subpackage exports exactly its public names, sorted, including the API contract's four."""

import judgewidgets.agreement as agreement


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in dir(agreement) if not name.startswith("_")}
    assert list(agreement.__all__) == sorted(agreement.__all__)
    assert set(agreement.__all__) == public


def test_contract_names() -> None:
    for name in ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "accuracy"):
        assert callable(getattr(agreement, name))


def test_only_numpy_and_pandas_at_import() -> None:
    import subprocess
    import sys

    code = "import sys, judgewidgets.agreement; print(sorted(m for m in ('scipy', 'sklearn') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
