"""The guides' Python examples (docs/guides/*.md) run as written, and print what the
guides say they print."""
import pathlib
import re

import pytest

GUIDES = sorted((pathlib.Path(__file__).parents[2] / "docs" / "guides").glob("*.md"))


@pytest.mark.parametrize("guide", GUIDES, ids=[g.stem for g in GUIDES])
def test_guide_examples_run(guide, capsys):
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), re.S)
    for block in blocks:
        exec(compile(block, str(guide), "exec"), {})
    out = capsys.readouterr().out
    expected = {
        "getting_started": ["[[ 8. 11.]\n [16. 23.]]", "TensorShape([2, 2])", "58.0", "large", "0.9"],
        "autodiff": ["[[66. 88.]]", "12.0 12.0", "1.0", "[6. 0.]", "[12. 20. 20. 28.]"],
        "eager": ["InvalidArgumentError"],
        "functions": ["1\n"],
        "keras": ["True", "TensorShape([2, 3])", "['label_accuracy', 'label_loss', 'loss', 'score_loss']",
                  "TensorShape([2, 4, 8])"],
        "checkpoints": ["2 ckpt-3", "True"],
        "performance": ["matmul"],
        "data": ["4 TensorShape([4, 28, 28])", "[[1, 2, 3], [1, 0, 0]] [3, 1]\n[[1, 2]] [2]"],
    }.get(guide.stem, [])
    for text in expected:
        assert text in out, f"{guide.name} should print {text!r}; it printed:\n{out}"
