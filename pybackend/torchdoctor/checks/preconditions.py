"""What a check needs of the model before it runs, and the result when the model lacks it.

Worker side (imports torch lazily): a model with nothing to train gets a WARN result instead of a
check that cannot mean anything; layers hidden from ``nn.Module`` (plain lists and dicts of layers,
bare tensors that require grad) are named, since they are the usual reason.
"""

from __future__ import annotations

from . import result as R


def has_trainable_parameters(model) -> bool:
    return any(p.requires_grad for p in model.parameters())


def nothing_to_train(model, result: dict, what: str) -> dict:
    """The WARN result of a check that needs parameters, on a model that has none."""
    result["verdict"] = R.WARN
    result["headline"] = f"{type(model).__name__} has no trainable parameters: {what}."
    result["sentences"] = unregistered_layers(model) + [
        "Run the Overfit test: it says why the optimizer has nothing to train."
    ]
    return result


def unregistered_layers(model) -> list[str]:
    """Sentences about layers nn.Module cannot see: modules in plain lists/dicts, bare tensors that require grad."""
    import torch

    found = []
    for m_name, module in model.named_modules():
        for attr, value in vars(module).items():
            if attr == "_modules":  # nn.Module's own registry
                continue
            where = f"`{(m_name + '.' if m_name else '') + attr}`"
            items = (
                list(value.values()) if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
            )
            if any(isinstance(v, torch.nn.Module) for v in items):
                container = "ModuleDict" if isinstance(value, dict) else "ModuleList"
                found.append(
                    f"{where} is a plain {type(value).__name__} of layers: nn.Module does not register them, so their parameters "
                    f"are not in model.parameters() and the optimizer never updates them. Use nn.{container}."
                )
            elif isinstance(value, torch.Tensor) and value.requires_grad and not isinstance(value, torch.nn.Parameter):
                found.append(
                    f"{where} is a tensor that requires grad but is not an nn.Parameter: the optimizer never sees it."
                )
    return found


def explain_backward_error(message: str) -> str:
    """What a ``loss.backward()`` RuntimeError means for the user's code, in words (torch's message first)."""
    text = message.strip().splitlines()[0] if message.strip() else message
    if "backward through the graph a second time" in message:
        return (
            f"loss.backward() failed: {text}. A graph is reused across steps: this step's forward uses a tensor "
            "computed in an earlier step (an RNN hidden state carried over, a cached or running value stored on the "
            "model), whose graph the previous backward already freed. Detach the carried state at the start of each "
            "step (hidden = hidden.detach(), or repackage_hidden); retain_graph=True only hides it and grows memory."
        )
    if "modified by an inplace operation" in message:
        return (
            f"loss.backward() failed: {text}. A tensor that autograd saved for the backward was changed in place "
            "afterwards (x += ..., x[...] = ..., relu_(), an inplace=True layer on a value used again). "
            "Use the out-of-place form (x = x + ...)."
        )
    return (
        f"loss.backward() failed: {text}. The loss does not depend on any parameter through autograd: the graph is "
        "cut (.detach(), .item(), torch.no_grad()) in forward or in the loss."
    )
