"""TD012 on two shapes from real projects that fell off their end only in appearance.

- YOLO's ``bbox_iou``: ``if CIoU or DIoU:`` around ``if DIoU: return ...`` / ``elif CIoU:
  return ...``. The inner chain tests exactly the operands of the enclosing ``or``: one of its
  branches runs, so the end is never reached. A chain that misses an operand still falls off.
- An optional-dependency factory: ``try: import albumentations as A ... return A.Compose(steps)``
  / ``except ImportError: log.warning(...)``. Its None means "not installed" (no notice; a
  caller using the result as a tensor still gets the warning), and an object of a class the
  function imports from a library outside torch is no tensor at all (never reported). A handler
  of another error, or a function of such a library (``einops.rearrange``), is still reported.
"""

import pytest

from support.lint import code, findings, hits

T = "import torch\n"

BBOX_IOU = T + code("""
    def bbox_iou(box1, box2, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
        inter = (torch.min(box1[2], box2[2]) - torch.max(box1[0], box2[0])).clamp(0)
        union = box1[2] * box1[3] + box2[2] * box2[3] - inter + eps
        iou = inter / union
        if GIoU or DIoU or CIoU:
            cw = torch.max(box1[2], box2[2]) - torch.min(box1[0], box2[0])
            ch = torch.max(box1[3], box2[3]) - torch.min(box1[1], box2[1])
            if CIoU or DIoU:
                c2 = cw**2 + ch**2 + eps
                rho2 = ((box2[0] - box1[0]) ** 2 + (box2[1] - box1[1]) ** 2) / 4
                if DIoU:
                    return iou - rho2 / c2
                elif CIoU:
                    v = (4 / 3.14159**2) * torch.pow(torch.atan(box2[2] / box2[3]) - torch.atan(box1[2] / box1[3]), 2)
                    with torch.no_grad():
                        alpha = v / (v - iou + (1 + eps))
                    return iou - (rho2 / c2 + v * alpha)
            else:
                c_area = cw * ch + eps
                return iou - (c_area - union) / c_area
        else:
            return iou

    def box_loss(pred, target):
        return (1.0 - bbox_iou(pred, target, CIoU=True)).mean()
""")


def test_the_bbox_iou_shape_is_quiet():
    assert hits(BBOX_IOU, "TD012") == []


def test_a_bbox_iou_chain_missing_an_operand_is_still_a_warning():
    text = BBOX_IOU.replace("if CIoU or DIoU:", "if CIoU or DIoU or GIoU:")
    (finding,) = findings(text, "TD012")
    assert (finding.line, finding.severity) == (2, "warning")
    assert "`1.0 - bbox_iou(pred, target, CIoU=True)`" in finding.message


NESTED = T + code("""
    def overlap(p, q, plain=False, centred=False):
        iou = (p * q).sum(-1)
        if {guard}:
            {before}
            if {first}:
                return iou - 0.1
            elif {second}:
                return iou - 0.2
        else:
            return iou

    def loss(p, q):
        return (1.0 - overlap(p, q, centred=True)).mean()
""")


@pytest.mark.parametrize(
    "guard, first, second",
    [
        ("plain or centred", "plain", "centred"),
        ("plain or centred", "centred", "plain"),
        ("flags.plain or p.ndim > 2", "p.ndim > 2", "flags.plain"),
    ],
)
def test_a_chain_covering_the_enclosing_or_is_quiet(guard, first, second):
    assert hits(NESTED.format(guard=guard, first=first, second=second, before="pass"), "TD012") == []


@pytest.mark.parametrize(
    "guard, first, second, before",
    [
        ("plain or centred or p.ndim > 2", "plain", "centred", "pass"),  # the third way in falls through
        ("plain or centred", "plain", "p.ndim > 2", "pass"),  # another test than the guard's
        ("plain or centred", "plain", "centred", "plain = False"),  # the guard's value changed on the way
        ("plain or p.any()", "plain", "p.any()", "pass"),  # a call may answer differently twice
    ],
)
def test_a_chain_that_does_not_cover_the_enclosing_test_is_still_a_warning(guard, first, second, before):
    text = NESTED.format(guard=guard, first=first, second=second, before=before)
    assert [(f.line, f.severity) for f in findings(text, "TD012")] == [(2, "warning")]


def test_a_covering_chain_with_a_branch_that_falls_through_is_still_a_warning():
    text = NESTED.format(guard="plain or centred", first="plain", second="centred", before="pass")
    text = text.replace("return iou - 0.2", "iou = iou - 0.2")
    assert hits(text, "TD012") == [("TD012", 2)]


FACTORY = T + code("""
    import logging

    log = logging.getLogger(__name__)

    def optional_augment(size=224):
        try:
            {imports}
            steps = [A.CenterCrop(height=size, width=size)]
            return {value}
        except {caught}:
            log.warning("extra not installed, skipping")

    class Folder(torch.utils.data.Dataset):
        def __init__(self, items, augment):
            self.items = items
            self.aug = optional_augment() if augment else None

        def __getitem__(self, i):
            img = self.items[i]
            if self.aug:
                img = self.aug(image=img)["image"]
            return torch.as_tensor(img)
""")
COMPOSE = dict(imports="import albumentations as A", value="A.Compose(steps)")
BLUR = dict(imports="import kornia as A", value="A.filters.gaussian_blur2d(steps[0], (3, 3), (1.0, 1.0))")


@pytest.mark.parametrize("caught", ["ImportError", "ModuleNotFoundError", "(ImportError, ModuleNotFoundError) as e"])
@pytest.mark.parametrize("shape", [COMPOSE, BLUR], ids=["compose", "function"])
def test_an_optional_import_factory_is_quiet(shape, caught):
    assert hits(FACTORY.format(caught=caught, **shape), "TD012") == []


@pytest.mark.parametrize("caught", ["OSError", "(ImportError, OSError)", "Exception"])
def test_none_from_another_handler_is_still_reported(caught):
    (finding,) = findings(FACTORY.format(caught=caught, **BLUR), "TD012")
    assert (finding.line, finding.severity) == (6, "information")


def test_an_import_error_handler_around_no_import_is_still_reported():
    text = FACTORY.format(caught="ImportError", imports="A = torch", value="A.sigmoid(steps[0])")
    assert hits(text.replace("A.CenterCrop(height=size, width=size)", "torch.ones(size)"), "TD012") == [("TD012", 6)]


def test_an_optional_import_whose_try_also_falls_through_is_still_reported():
    text = FACTORY.format(caught="ImportError", **BLUR).replace(
        "    return A.filters", "    if size:\n            return A.filters"
    )
    assert hits(text, "TD012") == [("TD012", 6)]


def test_an_optional_extras_tensor_used_by_a_caller_is_still_a_warning():
    text = FACTORY.format(caught="ImportError", **BLUR) + "\nscaled = optional_augment() * 2\n"
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and "`optional_augment() * 2`" in finding.message


LOCAL_IMPORT = T + code("""
    def make_pipeline(size, strong):
        {imports}
        if strong:
            return {value}

    out = make_pipeline(224, True)(image=torch.zeros(3, 224, 224))
""")


@pytest.mark.parametrize(
    "imports, value",
    [
        ("import albumentations as A", "A.Compose([A.CenterCrop(size, size)])"),
        ("from albumentations import Compose, CenterCrop", "Compose([CenterCrop(size, size)])"),
        ("import transformers", "transformers.AutoTokenizer(size)"),
    ],
)
def test_an_object_of_a_class_imported_by_the_function_from_outside_torch_is_never_reported(imports, value):
    assert hits(LOCAL_IMPORT.format(imports=imports, value=value), "TD012") == []


@pytest.mark.parametrize(
    "imports, value",
    [
        ("import einops", "einops.rearrange(torch.zeros(size), '(a b) -> a b', a=2)"),  # a function may give tensors
        ("import torchvision.transforms as A", "A.Compose([A.CenterCrop(size)])"),  # torch's own
        ("pass", "A.Compose([A.CenterCrop(size, size)])"),  # not imported by the function
        ("import albumentations as A; A = load_ops()", "A.Compose([A.CenterCrop(size, size)])"),  # rebound
    ],
)
def test_a_value_that_may_be_a_tensor_is_still_a_warning(imports, value):
    text = LOCAL_IMPORT.format(imports=imports, value=value)
    (finding,) = findings(text + "import albumentations as A\n" if imports == "pass" else text, "TD012")
    assert (finding.line, finding.severity) == (2, "warning")


def test_a_tensor_helper_whose_caller_does_arithmetic_is_still_a_warning():
    text = T + code("""
        def scaled(x, mode):
            import numpy as np
            if mode == "double":
                return torch.as_tensor(np.ones(3)) * x

        y = 1.0 - scaled(torch.zeros(3), 'half')
    """)
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and "`1.0 - scaled(torch.zeros(3), 'half')`" in finding.message
