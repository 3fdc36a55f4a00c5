"""Tests for hierattn.models.backbone and its subclasses: HAN, Transformer and recurrent backbones."""

import keras
import numpy as np
import pytest
from keras import ops

from hierattn.defaults import RNN_ATTENTIONS as ATTENTIONS
from hierattn.kinds import MULTI, SINGLE
from hierattn.models import Backbone, HANBackbone, RNNBackbone, TransformerBackbone

from layer_checks import assert_attention_distribution, assert_keras_round_trip


@pytest.fixture
def han():
    return HANBackbone(30, 3, embedding_dim=8, word_units=4, sentence_units=4, attention_units=6)


def han_ids(rng):
    ids = rng.integers(1, 30, size=(4, 3, 5))
    ids[0, 1:] = 0  # one sentence
    ids[1, :, 3:] = 0
    ids[2] = 0  # empty document
    return ids


def test_han_probabilities_and_attention(han, rng):
    ids = han_ids(rng)
    out = han.attention_model()(ids)
    probabilities = ops.convert_to_numpy(out["probabilities"])
    assert probabilities.shape == (4, 3)
    np.testing.assert_allclose(probabilities.sum(1), 1.0, atol=1e-5)
    assert_attention_distribution(out["word_attention"], ids != 0)
    assert_attention_distribution(out["sentence_attention"], (ids != 0).any(-1))


def test_han_is_invariant_to_extra_padding(han, rng):
    ids = han_ids(rng)[:2]
    padded = np.zeros((2, 6, 9), ids.dtype)
    padded[:, :3, :5] = ids
    np.testing.assert_allclose(han(ids), han(padded), atol=1e-5)


@pytest.mark.parametrize(
    "builder",
    [
        lambda: TransformerBackbone(
            30, 2, sequence_length=12, embedding_dim=8, num_heads=2, intermediate_dim=8, num_layers=2
        ),
        lambda: TransformerBackbone(
            30,
            4,
            sequence_length=12,
            embedding_dim=8,
            num_heads=2,
            intermediate_dim=8,
            pooling="mean",
            position="learned",
        ),
        lambda: TransformerBackbone(
            30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, num_layers=1, normalize_first=True
        ),
        lambda: TransformerBackbone(30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, normalize_first=False),
    ]
    + [lambda a=a: RNNBackbone(30, 2, embedding_dim=8, units=4, attention=a) for a in ATTENTIONS]
    + [lambda: RNNBackbone(30, 5, embedding_dim=8, units=4, cell="lstm", attention="luong-dot", window=2)],
)
def test_flat_models_mask_padding_and_round_trip(builder, rng, tmp_path):
    model = builder()
    ids = rng.integers(1, 30, size=(3, 7))
    ids[0, 4:] = 0
    padded = np.concatenate([ids, np.zeros((3, 5), ids.dtype)], axis=1)
    np.testing.assert_allclose(model(ids), model(padded), atol=1e-5)
    explainer = model.attention_model()
    out = explainer(ids)
    if len(out) > 1:
        (name,) = [k for k in out if k != "probabilities"]
        assert_attention_distribution(out[name], ids != 0)
    assert_keras_round_trip(model, ids, tmp_path, atol=1e-5)


def test_han_round_trip_keeps_explanations(han, rng, tmp_path):
    ids = han_ids(rng)
    reloaded = assert_keras_round_trip(han, ids, tmp_path)
    before, after = han.attention_model()(ids), reloaded.attention_model()(ids)
    for key in before:
        np.testing.assert_allclose(before[key], after[key], atol=1e-6)


def test_a_backbone_says_its_kind_by_its_head(han):
    sigmoids = HANBackbone(30, 3, embedding_dim=8, word_units=4, sentence_units=4, activation="sigmoid")
    assert (han.kind, han.multi_label, sigmoids.kind, sigmoids.multi_label) == (SINGLE, False, MULTI, True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_classes"):
        HANBackbone(10, 1)
    with pytest.raises(ValueError, match="attention must be one of"):
        RNNBackbone(10, 2, attention="cosine")
    with pytest.raises(ValueError, match="pooling"):
        TransformerBackbone(10, 2, pooling="max")
    with pytest.raises(ValueError, match="position must be one of"):
        TransformerBackbone(10, 2, position="none")
    with pytest.raises(ValueError, match="divisible"):
        TransformerBackbone(10, 2, embedding_dim=10, num_heads=4)
    with pytest.raises(TypeError, match="word_dropout"):
        TransformerBackbone(10, 2, word_dropout=0.1)  # an experiment that did not help, removed
    with pytest.raises(ValueError, match="cell"):
        HANBackbone(10, 2, cell="rnn")
    with pytest.raises(ValueError, match="^units must be a whole number of at least 1, not 0$"):
        RNNBackbone(10, 2, units=0)


def test_each_backbone_checks_its_arguments_without_building_anything():
    with pytest.raises(ValueError, match="^embedding_dim must be a whole number of at least 1, not 0$"):
        HANBackbone.check_arguments(embedding_dim=0)
    with pytest.raises(ValueError, match="^normalize_first must be True or False, not 'yes'$"):
        TransformerBackbone.check_arguments(normalize_first="yes")
    with pytest.raises(ValueError, match=r"^embedding_dim \(10\) must be divisible by num_heads \(4\)$"):
        TransformerBackbone.check_arguments(embedding_dim=10)  # with the default num_heads
    with pytest.raises(ValueError, match="^unknown rnn argument\\(s\\) num_layers: choose from attention, cell"):
        RNNBackbone.check_arguments(num_layers=2)
    RNNBackbone.check_arguments(window=0, local_mode="local-m", attention="luong-dot")


def test_training_step_lowers_the_loss(han, rng):
    ids = rng.integers(1, 30, size=(16, 3, 5))
    y = keras.utils.to_categorical(ids[:, 0, 0] % 3, 3)
    han.compile("adam", "categorical_crossentropy")
    first = han.train_on_batch(ids, y)
    for _ in range(15):
        last = han.train_on_batch(ids, y)
    assert last < first


@pytest.mark.parametrize(
    "builder, cell", [(HANBackbone, "gru"), (HANBackbone, "lstm"), (RNNBackbone, "gru"), (RNNBackbone, "lstm")]
)
def test_recurrent_layers_meet_cudnn_conditions(builder, cell):
    # Keras runs a GRU/LSTM on cuDNN when a GPU is present and these hold
    # (Keras's own checks): default activations, bias, no unrolling, no
    # recurrent dropout, use_cudnn "auto", and right-padded masks (below).
    from keras.src.backend.tensorflow.rnn import _do_gru_arguments_support_cudnn, _do_lstm_arguments_support_cudnn

    model = builder(30, 2, embedding_dim=8, cell=cell)
    recurrent = [
        inner
        for layer in model._flatten_layers()
        if isinstance(layer, keras.layers.Bidirectional)
        for inner in (layer.forward_layer, layer.backward_layer)
    ]
    assert len(recurrent) == (4 if builder is HANBackbone else 2)
    for layer in recurrent:
        assert layer.use_cudnn == "auto" and layer.recurrent_dropout == 0 and not layer.unroll, layer.name
        cell_ = layer.cell
        if isinstance(layer, keras.layers.GRU):
            assert _do_gru_arguments_support_cudnn(
                cell_.activation, cell_.recurrent_activation, layer.unroll, cell_.use_bias, cell_.reset_after
            ), layer.name
        else:
            assert _do_lstm_arguments_support_cudnn(
                cell_.activation, cell_.recurrent_activation, layer.unroll, cell_.use_bias
            ), layer.name


@pytest.mark.parametrize("mode", ["hierarchical", "flat"])
def test_encoded_batches_are_right_padded_for_cudnn(mode):
    from keras.src.backend.tensorflow.rnn import _is_sequence_right_padded

    from hierattn.data.batching import trim_padding
    from hierattn.models import TextPreprocessor

    from conftest import make_reviews

    texts, _ = make_reviews(40)
    preprocessor = TextPreprocessor(mode, min_count=1)
    preprocessor.adapt(
        texts + ["One.", "Two words. Then three more words here! And a fourth sentence."], progress=False
    )
    ids = trim_padding(preprocessor(texts[:20] + ["Short.", "Two words. Then three more words here!"]))
    words = ids.reshape(-1, ids.shape[-1]) != 0  # what the word encoder sees (all sentences folded into the batch)
    assert bool(_is_sequence_right_padded(words))
    if mode == "hierarchical":
        assert bool(_is_sequence_right_padded(words.reshape(ids.shape).any(axis=-1)))  # the sentence encoder's


@pytest.mark.parametrize(
    "backbone, rank, attention",
    [
        (
            lambda: HANBackbone(30, 3, embedding_dim=8, word_units=4, sentence_units=4, attention_units=6),
            3,
            {"word_attention", "sentence_attention"},
        ),
        (
            lambda: TransformerBackbone(30, 2, sequence_length=12, embedding_dim=8, num_heads=2, intermediate_dim=8),
            2,
            {"attention_pooling"},
        ),
        (
            lambda: TransformerBackbone(30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, pooling="mean"),
            2,
            set(),
        ),
        (lambda: RNNBackbone(30, 2, embedding_dim=8, units=4), 2, {"attention"}),
    ],
)
def test_backbone_knows_its_parts(backbone, rank, attention):
    model = backbone()
    assert isinstance(model, Backbone) and model.input_rank == rank
    assert isinstance(model.token_embedding, keras.layers.Embedding)
    assert model.token_embedding.input_dim == 30 and model.token_embedding.output_dim == 8
    assert set(model.attention_layers) == attention
    config = model.get_config()
    assert "layers" not in config  # the constructor's arguments, not the layer graph
    rebuilt = type(model).from_config(config)
    assert type(rebuilt) is type(model) and rebuilt.get_config() == config


def test_token_and_sentence_attention_combine_the_han_levels(han, rng):
    ids = han_ids(rng)
    outputs = {k: ops.convert_to_numpy(v) for k, v in han.attention_model()(ids).items()}
    tokens = han.token_attention(outputs)
    assert tokens.shape == ids.shape
    np.testing.assert_allclose(tokens, outputs["word_attention"] * outputs["sentence_attention"][..., None])
    np.testing.assert_allclose(han.sentence_attention(outputs), outputs["sentence_attention"])
    rnn = RNNBackbone(30, 2, embedding_dim=8, units=4)
    flat = {k: ops.convert_to_numpy(v) for k, v in rnn.attention_model()(ids[:, 0]).items()}
    np.testing.assert_allclose(rnn.token_attention(flat), flat["attention"])
    assert rnn.sentence_attention(flat) is None


def test_set_token_vectors_rescales_only_sinusoidal_embeddings():
    matrix = np.random.default_rng(0).normal(size=(30, 8)).astype("float32")
    rnn = RNNBackbone(30, 2, embedding_dim=8, units=4)
    rnn.set_token_vectors(matrix)
    np.testing.assert_allclose(rnn.token_embedding.embeddings.numpy(), matrix)
    transformer = TransformerBackbone(30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8)
    transformer.set_token_vectors(matrix)
    table = transformer.token_embedding.embeddings.numpy()
    np.testing.assert_allclose(np.std(table[1:]) * np.sqrt(8), 1.0, rtol=0.05)  # scaled to 1/sqrt(d)


def test_loading_builds_the_backward_layers_without_keras_copying_them():
    # Keras's Bidirectional copies its backward layer by serializing the forward one a second time; inside
    # load_model's object-sharing scope that config carries the layer's id(), which can collide with an id from
    # the saved file. Rebuilding from a config makes the backward layers itself (same names, same weights).
    from keras.src.saving import serialization_lib

    model = HANBackbone(30, 2, embedding_dim=8, word_units=4, sentence_units=4, attention_units=6, cell="lstm")
    config = model.get_config()
    shared = []
    original = serialization_lib.deserialize_keras_object

    def spy(value, *args, **kwargs):
        if isinstance(value, dict) and "shared_object_id" in value and value.get("class_name") in ("GRU", "LSTM"):
            shared.append(value["class_name"])
        return original(value, *args, **kwargs)

    serialization_lib.deserialize_keras_object = spy
    try:
        with serialization_lib.ObjectSharingScope():
            rebuilt = HANBackbone.from_config(config)
    finally:
        serialization_lib.deserialize_keras_object = original
    assert shared == []
    names = [
        (layer.forward_layer.name[len("forward_") :], layer.backward_layer.name[len("backward_") :])
        for layer in rebuilt._flatten_layers()
        if isinstance(layer, keras.layers.Bidirectional)
    ]
    assert len(names) == 2 and all(forward == backward for forward, backward in names)
    assert all(
        layer.backward_layer.go_backwards
        for layer in rebuilt._flatten_layers()
        if isinstance(layer, keras.layers.Bidirectional)
    )


def layer_policies(model):
    """The dtype policy of each layer inside `model` (recursively), by name, but its input's (int32 ids)."""
    return [
        (layer.name, layer.dtype_policy.name)
        for layer in model._flatten_layers(include_self=False, recursive=True)
        if not isinstance(layer, keras.layers.InputLayer)
    ]


@pytest.mark.parametrize("dtype, global_policy", [("mixed_float16", "float32"), ("float32", "mixed_float16")])
@pytest.mark.parametrize(
    "builder",
    [
        lambda dtype: HANBackbone(30, 3, embedding_dim=8, word_units=4, sentence_units=4, dropout=0.1, dtype=dtype),
        lambda dtype: RNNBackbone(30, 2, embedding_dim=8, units=4, cell="lstm", dropout=0.1, dtype=dtype),
        lambda dtype: RNNBackbone(30, 2, embedding_dim=8, units=4, attention="context", dtype=dtype),
        lambda dtype: TransformerBackbone(
            30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, normalize_first=True, dropout=0.1, dtype=dtype
        ),
        lambda dtype: TransformerBackbone(
            30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, pooling="mean", dtype=dtype
        ),
    ],
)
def test_dtype_reaches_every_layer_and_the_global_policy_is_never_switched(builder, dtype, global_policy, monkeypatch):
    # Keras's public way: `dtype=` given to each layer (as keras-hub's backbones do), down to the layers inside
    # Keras's own (a GRU's cell, a Bidirectional's copy, an attention's projections); only the head is float32.
    keras.config.set_dtype_policy(global_policy)
    switched = []
    monkeypatch.setattr(keras.config, "set_dtype_policy", switched.append)
    model = builder(dtype)
    rebuilt = type(model).from_config(model.get_config())  # as `load_model` does: `recurrent` makes the backward RNNs
    for backbone in (model, rebuilt):
        policies = layer_policies(backbone)
        assert backbone.dtype_policy.name == dtype and ("probabilities", "float32") in policies
        others = {policy for name, policy in policies if name != "probabilities"}
        assert others == {dtype} and len(policies) >= 10, policies
    assert switched == [] and keras.config.dtype_policy().name == global_policy
