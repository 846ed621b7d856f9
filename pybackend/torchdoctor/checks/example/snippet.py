"""The ``torchdoctor_example()`` function to paste into the user's file, with the blanks named."""

from __future__ import annotations

from ..discovery import EXAMPLE_FUNCTION


def example_snippet(class_name: str, init_args: list[str], forward_inputs: list[str]) -> str:
    """The function to paste into the user's file, with the blanks named."""
    args = ", ".join(f"{a}=..." for a in init_args)
    lines = [
        "import torch",
        "",
        "",
        f"def {EXAMPLE_FUNCTION}():",
        '    """Torch Doctor\'s checks call this: the model and one small batch."""',
        f"    model = {class_name}({args})" + ("  # fill in the constructor arguments" if init_args else ""),
    ]
    if len(forward_inputs) > 1:
        parts = ", ".join("torch.randn(8, ...)" for _ in forward_inputs)
        lines.append(f"    inputs = ({parts})  # one tensor per forward argument: {', '.join(forward_inputs)}")
    else:
        lines.append("    inputs = torch.randn(8, ...)  # one batch, as your DataLoader yields it")
    lines += [
        "    targets = torch.randint(0, ..., (8,))  # class indices; a float tensor for regression",
        "    return model, (inputs, targets)",
    ]
    return "\n".join(lines) + "\n"
