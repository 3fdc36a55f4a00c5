"""Private helpers shared by the attention layers (masking and input parsing).

Everything here uses `keras.ops` only, so the layers stay backend-agnostic.
"""

from keras import ops

# Added to the scores of padded positions before the softmax. The softmax is
# always computed in float32 (see `masked_softmax`), where exp(-1e9) is exactly
# zero, so this is safe under mixed precision too.
_MASK_PENALTY = -1e9


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over `axis` that gives padded positions exactly zero weight.

    The scores of masked positions are pushed to a large negative number
    *before* the softmax (so the real positions are renormalised among
    themselves), the softmax runs in float32 whatever the compute dtype, and
    the result is multiplied by the mask, so that a row whose positions are all
    padding gives zeros instead of a uniform distribution or NaN.

    Args:
        scores: Float tensor of unnormalised scores.
        mask: Optional boolean tensor broadcastable to `scores`; `False` marks
            padding.
        axis: Axis to normalise over.

    Returns:
        Weights with the dtype of `scores`: real positions of each row sum to
        1, padded positions are 0, fully padded rows are all 0.
    """
    dtype = scores.dtype
    scores = ops.cast(scores, "float32")
    if scores.shape[axis] == 1:
        # A single position (e.g. a one-sentence document) gets all the weight.
        weights = ops.ones_like(scores)
        if mask is not None:
            weights = weights * ops.cast(mask, "float32")
        return ops.cast(weights, dtype)
    if mask is None:
        return ops.cast(ops.softmax(scores, axis=axis), dtype)
    mask = ops.cast(mask, "bool")
    scores = ops.where(mask, scores, _MASK_PENALTY)
    weights = ops.softmax(scores, axis=axis) * ops.cast(mask, "float32")
    return ops.cast(weights, dtype)


def unpack_inputs(inputs, layer_name, allow_single=False):
    """Splits `[query, value]` or `[query, value, key]` into three tensors.

    Args:
        inputs: A list/tuple of 2 or 3 tensors, or (if `allow_single`) one
            tensor used as query, value and key (self-attention).
        layer_name: Class name used in error messages.
        allow_single: Whether a single tensor is accepted.

    Returns:
        `(query, value, key)`; `key` defaults to `value`.
    """
    if not is_structure(inputs):
        if allow_single:
            return inputs, inputs, inputs
        raise ValueError(
            f"{layer_name} must be called on a list [query, value] or "
            f"[query, value, key]. Received: {type(inputs).__name__}."
        )
    if len(inputs) not in (2, 3):
        raise ValueError(
            f"{layer_name} takes a list of 2 or 3 tensors [query, value] or "
            f"[query, value, key]. Received a list of {len(inputs)}."
        )
    query, value = inputs[0], inputs[1]
    key = inputs[2] if len(inputs) == 3 else value
    return query, value, key


def is_structure(inputs):
    """Whether `inputs` is a list of tensors/shapes rather than one tensor/shape.

    A shape tuple such as `(2, 5, 8)` (what `build` receives for a single
    input) counts as one input, not as a list.
    """
    if not isinstance(inputs, (list, tuple)):
        return False
    return not all(d is None or isinstance(d, int) for d in inputs)


def unpack_masks(mask, single_input=False):
    """Returns `(query_mask, value_mask)` from the mask Keras passes to `call`.

    Args:
        mask: `None`, a single boolean tensor (self-attention on one input),
            or a list `[query_mask, value_mask]` /
            `[query_mask, value_mask, key_mask]`; entries may be `None`. When
            both a value and a key mask are given they are combined.
        single_input: Whether the layer was called on one tensor, in which
            case a single mask applies to both query and value.

    Returns:
        Tuple of two boolean tensors (or `None`).
    """
    if mask is None:
        return None, None
    if not isinstance(mask, (list, tuple)):
        if single_input:
            mask = ops.cast(mask, "bool")
            return mask, mask
        raise ValueError(
            "The mask of an attention layer called on [query, value] must be "
            f"a list [query_mask, value_mask]. Received: {type(mask).__name__}."
        )
    masks = [None if m is None else ops.cast(m, "bool") for m in mask]
    query_mask = masks[0]
    value_mask = masks[1] if len(masks) > 1 else None
    key_mask = masks[2] if len(masks) > 2 else None
    if value_mask is None:
        value_mask = key_mask
    elif key_mask is not None:
        value_mask = ops.logical_and(value_mask, key_mask)
    return query_mask, value_mask


def attention_mask(query_mask=None, value_mask=None, extra_mask=None):
    """Combines query, value and extra masks into one `(B, Tq, Tv)` mask.

    Args:
        query_mask: Optional `(B, Tq)` boolean mask.
        value_mask: Optional `(B, Tv)` boolean mask.
        extra_mask: Optional mask broadcastable to `(B, Tq, Tv)` (a causal or
            local-window mask).

    Returns:
        A boolean tensor broadcastable to `(B, Tq, Tv)`, or `None` when no mask
        was given.
    """
    mask = extra_mask
    for part in (
        None if value_mask is None else ops.expand_dims(value_mask, -2),
        None if query_mask is None else ops.expand_dims(query_mask, -1),
    ):
        if part is None:
            continue
        mask = part if mask is None else ops.logical_and(mask, part)
    return mask


def check_dropout(dropout):
    """Raises a clear `ValueError` for a dropout rate outside [0, 1)."""
    if not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"dropout must be in [0, 1). Received: dropout={dropout}.")


def check_choice(value, choices, name):
    """Raises a clear `ValueError` unless `value` is one of `choices`."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}. Received: {name}={value!r}.")


def check_positive_int(value, name, allow_none=False):
    """Raises a clear `ValueError` unless `value` is a positive integer."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer. Received: {name}={value!r}.")
