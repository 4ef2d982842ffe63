import pytest

import judgewidgets as jw
from judgewidgets.rubrics._criterion import NA_LABEL

FOUR = [
    jw.CriterionOption("1", 0.0),
    jw.CriterionOption("2", 0.33),
    jw.CriterionOption("3", 0.67),
    jw.CriterionOption("4", 1.0),
]

YAML = """
- name: accurate
  requirement: States the correct capital
  weight: 5
- name: satisfaction
  requirement: How satisfied would you be with this response?
  weight: 10.0
  scale_type: ordinal
  options:
    - label: "1"
      value: 0.0
    - label: "2"
      value: 0.33
    - label: "3"
      value: 0.67
    - label: "4"
      value: 1.0
- name: efficiency
  requirement: Is the number of exchange turns appropriate?
  weight: 5.0
  scale_type: nominal
  options:
    - label: Too few interactions
      value: 0.0
    - label: Too many interactions
      value: 0.0
    - label: Just right
      value: 1.0
    - label: Not a dialogue
      value: 0.0
      na: true
- name: rambling
  requirement: The answer rambles
  weight: -3
"""


def test_option_values_must_lie_in_the_unit_interval() -> None:
    with pytest.raises(jw.ConfigurationError, match=r"option 'x'.*value 1.5 .* must lie in \[0, 1\]"):
        jw.CriterionOption("x", 1.5)
    assert jw.CriterionOption("n/a", 7.0, na=True).na  # NA options are not scored


def test_criterion_kinds() -> None:
    binary = jw.Criterion("Mentions the year")
    assert binary.scale_type == "binary" and not binary.is_multi_choice
    ordinal = jw.Criterion("Quality", options=FOUR)
    assert ordinal.scale_type == "ordinal" and ordinal.is_multi_choice
    nominal = jw.Criterion("Tone", scale_type="nominal", options=FOUR)
    assert nominal.scale_type == "nominal"
    assert jw.Criterion("Flaw", weight=-4).weight == -4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"requirement": "x", "options": [jw.CriterionOption("a", 1.0)]}, "at least two scored options"),
        ({"requirement": "x", "scale_type": "binary", "options": FOUR}, "binary criterion takes no options"),
        ({"requirement": "x", "aggregation": "mean"}, "aggregation 'mean' is not one of majority"),
        ({"requirement": "x", "options": FOUR, "aggregation": "weighted_mode"}, "not one of mean, median"),
        ({"requirement": "x", "weight": float("nan")}, "weight must be finite"),
        ({"requirement": ""}, "requirement"),
        ({"requirement": "x", "options": [jw.CriterionOption("a", 0), jw.CriterionOption("a", 1)]}, "unique"),
    ],
)
def test_invalid_criteria(kwargs: dict, message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        jw.Criterion(**kwargs)


def test_na_option_is_appended_once() -> None:
    criterion = jw.Criterion("Quality", options=FOUR).with_na_option()
    assert criterion.options[-1].label == NA_LABEL and criterion.options[-1].na
    assert criterion.na_option_index == 4
    assert criterion.with_na_option() == criterion


def test_yaml_roundtrip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rubric = jw.Rubric.from_yaml(YAML)
    assert rubric.names == ["accurate", "satisfaction", "efficiency", "rambling"]
    assert rubric["efficiency"].na_option_index == 3
    assert rubric["rambling"].weight == -3
    path = tmp_path / "rubric.yaml"
    rubric.to_yaml(path)
    again = jw.Rubric.from_yaml(path)
    assert again.to_list() == rubric.to_list()
    assert jw.Rubric.from_yaml(str(path)).names == rubric.names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- name: a\n  weight: 2\n", r"criterion 1 \('a'\): field 'requirement' is missing"),
        ("- requirement: x\n  weight: heavy\n", "field 'weight' must be a number"),
        ("- requirement: x\n  colour: red\n", "unknown field.*colour"),
        (
            "- requirement: x\n  options:\n    - label: a\n      value: 2\n    - label: b\n      value: 0\n",
            r"option 1: .*must lie in \[0, 1\]",
        ),
        ("- name: q\n  requirement: x\n  options:\n    - value: 1\n", "option 1 needs a 'label'"),
        ("key: [unclosed", "does not parse"),
        ("just text", "must be a list of criteria"),
    ],
)
def test_invalid_yaml_names_criterion_and_field(text: str, message: str) -> None:
    with pytest.raises(jw.ConfigurationError, match=message):
        jw.Rubric.from_yaml(text)


def test_yaml_is_loaded_safely() -> None:
    with pytest.raises(jw.ConfigurationError):
        jw.Rubric.from_yaml("- !!python/object/apply:os.system ['echo hacked']\n")


def test_rubric_names_and_errors() -> None:
    rubric = jw.Rubric([jw.Criterion("a"), jw.Criterion("b")])
    assert rubric.names == ["criterion_1", "criterion_2"]
    with pytest.raises(jw.ConfigurationError, match="repeated: x"):
        jw.Rubric([jw.Criterion("a", name="x"), jw.Criterion("b", name="x")])
    with pytest.raises(jw.ConfigurationError, match="at least one criterion"):
        jw.Rubric([])
