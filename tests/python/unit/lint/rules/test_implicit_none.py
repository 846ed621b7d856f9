"""TD012: returns a value on some paths, falls off the end on others."""

import pytest

from support.lint import code, findings, hits

T = "import torch\n"


def test_seed_004_style_helper():
    text = T + code("""
        def get_style_embedding(meta):
            if meta.get("desc"):
                emb = encode(meta["desc"])
                return emb
            elif "style_id" in meta:
                return table[meta["style_id"]]
    """)
    (finding,) = findings(text)
    assert (finding.rule_id, finding.line) == ("TD012", 2)
    assert finding.span.start_col == 4 and finding.span.end_col == 4 + len("get_style_embedding")
    assert "`emb`" in finding.message


@pytest.mark.parametrize(
    "body",
    [
        "if a:\n    return x\nreturn None",
        "if a:\n    return x\nelse:\n    return y",
        "if a:\n    return x\nraise ValueError(a)",
        "while True:\n    if a:\n        return x",
        "try:\n    return f(x)\nexcept KeyError:\n    raise",
        "with ctx:\n    return x",
        "for i in it:\n    return i\nelse:\n    return None",
        "for i in it:\n    if i:\n        return i",
        "if a:\n    return x\nsys.exit(1)",
        "if a:\n    return True",
        "if a:\n    return f'{x}'",
        "for row in rows:\n    yield row",
        "if a:\n    return\nprint(a)",
        "if a:\n    return x\nassert False, 'unreachable'",
    ],
)
def test_paths_that_all_end_explicitly_or_non_tensor_returns(body):
    text = (
        T
        + "import sys\ndef f(a, x=None, y=None, it=(), ctx=None, rows=()):\n"
        + "".join("    " + line + "\n" for line in body.splitlines())
    )
    assert hits(text) == []


@pytest.mark.parametrize(
    "body",
    [
        "if a:\n    return x",
        "for i in it:\n    if i:\n        return i * 2",
        "while a:\n    return x",
        "try:\n    return g(x)\nexcept KeyError:\n    pass",
        "if a:\n    return x\nelif y:\n    return y\nelse:\n    print(a)",
        "while True:\n    if a:\n        break\n    return x",
    ],
)
def test_paths_that_fall_off(body):
    text = T + "def f(a, x=None, y=None, it=()):\n" + "".join("    " + line + "\n" for line in body.splitlines())
    assert hits(text) == [("TD012", 2)]


def test_files_without_torch_are_not_checked():
    assert hits("def f(a, x):\n    if a:\n        return x\n") == []


def test_stubs_and_abstract_methods_are_fine():
    text = (
        T + "class Base:\n    def forward(self, x):\n        raise NotImplementedError\n    def g(self):\n        ...\n"
    )
    assert hits(text) == []


def test_optional_return_annotation_declares_none():
    text = T + "from typing import Optional\ndef f(a, x) -> Optional[torch.Tensor]:\n    if a:\n        return x\n"
    assert hits(text) == []
    assert hits(text.replace("Optional[torch.Tensor]", "torch.Tensor | None")) == []
    assert hits(text.replace("Optional[torch.Tensor]", "torch.Tensor")) == [("TD012", 3)]


def test_local_helpers_that_never_return_end_the_path():
    text = T + code("""
        from typing import NoReturn
        def fail(msg) -> NoReturn:
            raise RuntimeError(msg)
        def bail(msg):
            log(msg)
            raise ValueError(msg)
        def f(a, x):
            if a:
                return x
            fail("no")
        def g(a, x):
            if a:
                return x
            bail("no")
    """)
    assert hits(text) == []
