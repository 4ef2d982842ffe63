"""A rubric: a list of criteria, loaded from and saved to YAML in AutoRubric's format."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from .._errors import ConfigurationError
from ._criterion import Criterion, CriterionOption

_CRITERION_KEYS = {"requirement", "name", "weight", "scale_type", "options", "aggregation"}
_OPTION_KEYS = {"label", "value", "na"}


class Rubric:
    """Criteria to grade a submission against. Unnamed criteria are named criterion_1..criterion_n."""

    def __init__(self, criteria: Sequence[Criterion | dict[str, Any]]) -> None:
        built = []
        for i, criterion in enumerate(criteria):
            if isinstance(criterion, dict):
                criterion = _criterion_from_dict(criterion, i)
            elif not isinstance(criterion, Criterion):
                raise ConfigurationError(f"criterion {i + 1} is a {type(criterion).__name__}, not a Criterion")
            if criterion.name is None:
                criterion = criterion.model_copy(update={"name": f"criterion_{i + 1}"})
            built.append(criterion)
        if not built:
            raise ConfigurationError("a rubric needs at least one criterion")
        names = [str(c.name) for c in built]  # every criterion is named by now
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigurationError(f"criterion names must be unique; repeated: {', '.join(repeated)}")
        self.criteria: list[Criterion] = built

    def __repr__(self) -> str:
        return f"Rubric({len(self.criteria)} criteria: {', '.join(self.names)})"

    def __len__(self) -> int:
        return len(self.criteria)

    def __iter__(self) -> Iterator[Criterion]:
        return iter(self.criteria)

    def __getitem__(self, key: int | str) -> Criterion:
        if isinstance(key, int):
            return self.criteria[key]
        for criterion in self.criteria:
            if criterion.name == key:
                return criterion
        raise KeyError(key)

    @property
    def names(self) -> list[str]:
        return [str(c.name) for c in self.criteria]

    # --- YAML ---------------------------------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, source: str | Path) -> Rubric:
        """Load a rubric from YAML text or a .yaml file: a list of criteria (or a mapping with `criteria:`)."""
        text = source
        if isinstance(source, Path) or (
            isinstance(source, str) and "\n" not in source and source.endswith((".yaml", ".yml"))
        ):
            path = Path(source)
            if not path.exists():
                raise ConfigurationError(f"rubric file not found: {path}")
            text = path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(str(text))
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"rubric YAML does not parse: {exc}") from None
        if isinstance(data, dict):
            data = data.get("criteria", data.get("rubric"))
        if not isinstance(data, list):
            raise ConfigurationError("rubric YAML must be a list of criteria (or a mapping with a `criteria:` list)")
        return cls(data)

    def to_list(self) -> list[dict[str, Any]]:
        out = []
        for c in self.criteria:
            entry: dict[str, Any] = {"name": c.name, "requirement": c.requirement, "weight": c.weight}
            if c.is_multi_choice:
                entry["scale_type"] = c.scale_type
                entry["options"] = [
                    {"label": o.label, "value": o.value, **({"na": True} if o.na else {})} for o in c.option_list
                ]
            if c.aggregation:
                entry["aggregation"] = c.aggregation
            out.append(entry)
        return out

    def to_yaml(self, path: str | Path | None = None) -> str:
        """The rubric as YAML (AutoRubric's format); also written to `path` when given."""
        text = yaml.safe_dump(self.to_list(), sort_keys=False, allow_unicode=True)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text


def _criterion_from_dict(data: Any, index: int) -> Criterion:
    where = f"criterion {index + 1}"
    if not isinstance(data, dict):
        raise ConfigurationError(f"{where} must be a mapping, got {type(data).__name__}")
    where = f"criterion {index + 1} ({data.get('name') or data.get('requirement', '?')!r})"
    unknown = set(data) - _CRITERION_KEYS
    if unknown:
        raise ConfigurationError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    if "requirement" not in data:
        raise ConfigurationError(f"{where}: field 'requirement' is missing")
    options = data.get("options")
    if options is not None:
        if not isinstance(options, list):
            raise ConfigurationError(f"{where}: field 'options' must be a list")
        built = []
        for j, option in enumerate(options):
            if not isinstance(option, dict) or "label" not in option:
                raise ConfigurationError(f"{where}: option {j + 1} needs a 'label'")
            bad = set(option) - _OPTION_KEYS
            if bad:
                raise ConfigurationError(f"{where}: option {j + 1} has unknown field(s) {', '.join(sorted(bad))}")
            try:
                built.append(
                    CriterionOption(
                        str(option["label"]), float(option.get("value", 0.0)), bool(option.get("na", False))
                    )
                )
            except (TypeError, ValueError) as exc:
                raise ConfigurationError(f"{where}: option {j + 1}: {exc}") from None
        options = built
    try:
        weight = float(data.get("weight", 1.0))
    except (TypeError, ValueError):
        raise ConfigurationError(f"{where}: field 'weight' must be a number, got {data.get('weight')!r}") from None
    try:
        return Criterion(
            requirement=data["requirement"],
            name=data.get("name"),
            weight=weight,
            scale_type=data.get("scale_type"),
            options=options,
            aggregation=data.get("aggregation"),
        )
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: {str(exc).split(': ', 1)[-1]}") from None
