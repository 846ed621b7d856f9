"""A ``ParameterList``/``ParameterDict`` lists its parameters under expressions that evaluate:
``pl[0]`` and ``pd['a-b']``, not ``pl.0``; a member whose name is no identifier gets none."""

import pytest
import torch

from torchdoctor.runtime.summary.children import module_children

pytestmark = pytest.mark.filterwarnings("error")


def _evaluates(parent, children):
    named = [(name, value, suffix) for name, value, suffix in children if isinstance(value, torch.Tensor)]
    assert named
    for _, value, suffix in named:
        assert suffix is not None
        assert eval("parent" + suffix, {"parent": parent}) is value


def test_parameter_list_members_are_indexed():
    pl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.zeros(3))])
    _evaluates(pl, module_children(pl))


def test_parameter_dict_members_are_keyed_even_when_not_identifiers():
    pd = torch.nn.ParameterDict({"a-b": torch.nn.Parameter(torch.ones(2)), "w": torch.nn.Parameter(torch.ones(1))})
    _evaluates(pd, module_children(pd))


def test_a_buffer_named_without_an_identifier_has_no_expression():
    m = torch.nn.Linear(2, 2)
    m.register_buffer("running-x", torch.ones(1))
    suffixes = {name: suffix for name, _, suffix in module_children(m)}
    assert suffixes["weight"] == ".weight" and suffixes["running-x"] is None
