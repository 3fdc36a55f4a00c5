"""Reading classifiers saved by hierattn 0.5, whose backbones were anonymous functional models.

Their layers had the names and order the `Backbone` subclasses still give
them, so the arguments of the matching subclass are read off the saved layer
configs and the saved weights load into it unchanged.
"""


def _layers(config):
    return {layer["config"]["name"]: layer for layer in config["config"]["layers"]}


def _recurrent(layer):
    """`(cell, units)` of a saved `Bidirectional` GRU or LSTM."""
    inner = layer["config"]["layer"]
    return inner["class_name"].lower(), inner["config"]["units"]


def _dropout(layers):
    return layers["embedding_dropout"]["config"]["rate"] if "embedding_dropout" in layers else 0.0


def _dtype(layers):
    dtype = layers["embedding"]["config"].get("dtype")
    return dtype["config"]["name"] if isinstance(dtype, dict) else dtype


def backbone_config(config):
    """The serialized `Backbone` for a 0.5 functional backbone's serialized config (others unchanged)."""
    if not isinstance(config, dict) or config.get("class_name") != "Functional":
        return config
    name = config["config"]["name"]
    layers = _layers(config)
    embedding = layers["embedding"]["config"]
    args = {
        "name": name,
        "num_classes": layers["probabilities"]["config"]["units"],
        "dropout": _dropout(layers),
        "dtype": _dtype(layers),
    }
    if name == "han":
        word = layers["word_encoder"]["config"]["layer"]
        cell, word_units = _recurrent(word)
        args.update(
            vocabulary_size=embedding["input_dim"],
            embedding_dim=embedding["output_dim"],
            cell=cell,
            word_units=word_units,
            sentence_units=_recurrent(layers["sentence_encoder"])[1],
            attention_units=layers["word_attention"]["config"]["units"],
        )
        class_name = "HANBackbone"
    elif name == "transformer":
        block = layers["encoder_1"]["config"]
        args.update(
            vocabulary_size=embedding["vocabulary_size"],
            embedding_dim=embedding["embedding_dim"],
            sequence_length=embedding["sequence_length"],
            position=embedding["position"],
            num_heads=block["num_heads"],
            intermediate_dim=block["intermediate_dim"],
            normalize_first=block["normalize_first"],
            num_layers=sum(key.startswith("encoder_") for key in layers),
            pooling="attention" if "attention_pooling" in layers else "mean",
        )
        class_name = "TransformerBackbone"
    else:
        cell, units = _recurrent(layers["encoder"])
        attention = layers["attention"]
        kind = {"BahdanauAttention": "bahdanau", "ContextAttention": "context"}.get(attention["class_name"])
        args.update(
            vocabulary_size=embedding["input_dim"],
            embedding_dim=embedding["output_dim"],
            cell=cell,
            units=units,
            attention=kind or f"luong-{attention['config']['score_mode']}",
            window=attention["config"].get("window"),
            local_mode=attention["config"].get("local_mode", "local-p"),
        )
        class_name = "RNNBackbone"
    return {
        "module": "hierattn.models",
        "class_name": class_name,
        "registered_name": f"hierattn>{class_name}",
        "config": args,
    }
