"""The ``torchdoctor_example()`` snippet for a vision model class built from a config (Hugging Face's
``ViTForImageClassification``, ``ResNetForImageClassification``): a config whose signature takes
``num_channels``.

The general snippet left the images as ``torch.randn(8, ...)`` and the config as ``config=...``;
the image's channels and size are in the config already. So the snippet builds a small config (the
sizes of :mod:`snippet_library` the config takes as single ints) and draws its images as the
config says: ``torch.randn(8, config.num_channels, config.image_size, config.image_size)``, or
at the checks' default 2-d size when the config has no ``image_size`` (a convolutional net takes
any). An image classifier gets ``(8,)`` labels below ``config.num_labels``.
"""

from __future__ import annotations

import inspect

from .snippet_library import config_params, import_lines, small_sizes, wrapped


def vision_config_class(cls):
    """The class's config class when it describes images (``num_channels``; BEiT's also has a
    vocabulary, of image tokens), else None."""
    config = getattr(cls, "config_class", None)
    return config if inspect.isclass(config) and "num_channels" in config_params(config) else None


def vision_snippet(cls, class_name: str, example_function: str, import_note: str) -> str:
    """The whole function to paste, for a class with a :func:`vision_config_class`; it runs as written
    (``import_note``: where the import line goes, as the general snippet says it)."""
    config = vision_config_class(cls)
    params = config_params(config)
    imports = import_lines(cls, class_name, config, import_note)
    lines = ["import torch", "", *imports, "", ""]
    lines += [
        f"def {example_function}():",
        '    """Torch Doctor\'s checks call this: the model and one small batch."""',
        *_config_lines(config, params),
        f"    model = {class_name}(config)",
        f"    pixel_values = torch.randn(8, config.num_channels, {_side(params)})  # {_images_note(params)}",
    ]
    if _takes_class_labels(cls, class_name):
        lines.append("    labels = torch.randint(0, config.num_labels, (8,))  # one class per image")
        lines.append(
            '    return {"model": model, "inputs": (pixel_values,), "targets": labels}'
            "  # passed as forward(labels=targets): the model's own loss is used"
        )
    else:
        lines.append(
            '    return {"model": model, "inputs": (pixel_values,)}  # targets and loss inferred from the output'
        )
    return "\n".join(lines) + "\n"


def _config_lines(config, params: dict) -> list[str]:
    sizes = small_sizes(config, params, ints_only=True)
    if not sizes:  # sizes per stage (Swin's, ConvNeXt's lists): the config's own, left to the user
        return [f"    config = {config.__name__}()  # its default sizes: make them smaller if the checks run slowly"]
    return [
        f"    config = {config.__name__}(  # small, so that the checks train it fast on a CPU",
        *wrapped(sizes, "        "),
        "    )",
    ]


def _side(params: dict) -> str:
    if "image_size" in params:
        return "config.image_size, config.image_size"
    from .infer import DEFAULT_SPATIAL

    return f"{DEFAULT_SPATIAL[2]}, {DEFAULT_SPATIAL[2]}"


def _images_note(params: dict) -> str:
    if "image_size" in params:
        return "8 images of the config's channels and size"
    return "8 images of the config's channels; any size fits a convolutional net"


def _takes_class_labels(cls, class_name: str) -> bool:
    """An image classifier whose forward takes ``labels`` (a detector's are boxes, not classes)."""
    try:
        takes = "labels" in inspect.signature(cls.forward).parameters
    except (TypeError, ValueError):
        return False
    return takes and class_name.endswith("ForImageClassification")
