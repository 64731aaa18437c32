"""onnx_attr_domains.py — what values each attribute of each ONNX operator
may take, opset by opset, for the opset-history audit (docs/onnx.md,
"Every opset"): the generator of tests/onnx_opsets (gen_opset_tests.py)
and the test that walks the schema history (tests/onnx_conformance/
test_opset_history.py) both read it.

An attribute's *domain* is the list of value keys a test must cover (or
tessera must refuse) at an opset:
- an enumerated string attribute: its values, as STRING_ENUMS lists them
  per opset range (checked against the schema's own text by the test);
- a boolean flag (FLAG_NAMES, an INT attribute defaulting to 0 or 1):
  0 and 1; INT_ENUMS lists the other integer enumerations;
- anything else: the one key "set" (the attribute given at all).

The schemas come from the installed onnx package
(onnx.defs.get_all_schemas_with_history), the default domain only, every
version in effect at opset 7 or later.
"""
import collections

import onnx
import onnx.defs

FIRST_OPSET = 7
AUTO_PAD = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
DIRECTIONS = ("forward", "reverse", "bidirectional")
LOSS_REDUCTIONS = ("none", "sum", "mean")

# (op, attr) -> [(value, first opset, last opset or None), ...]
STRING_ENUMS = {
    **{(op, "auto_pad"): [(v, 1, None) for v in AUTO_PAD]
       for op in ("AveragePool", "Conv", "ConvInteger", "ConvTranspose", "LpPool", "MaxPool", "QLinearConv")},
    **{(op, "direction"): [(v, 1, None) for v in DIRECTIONS] for op in ("GRU", "LSTM", "RNN")},
    **{(op, "reduction"): [(v, 12, None) for v in LOSS_REDUCTIONS]
       for op in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")},
    **{(op, "reduction"): [("none", 16, None), ("add", 16, None), ("mul", 16, None), ("max", 18, None),
                           ("min", 18, None)] for op in ("ScatterElements", "ScatterND")},
    **{(op, "round_mode"): [(v, 24, None) for v in ("up", "down", "nearest")] for op in ("Cast", "CastLike")},
    ("BitShift", "direction"): [("LEFT", 11, None), ("RIGHT", 11, None)],
    ("CausalConvWithState", "activation"): [(v, 27, None) for v in ("none", "silu", "swish")],
    ("DepthToSpace", "mode"): [("DCR", 11, None), ("CRD", 11, None)],
    ("Gelu", "approximate"): [("none", 20, None), ("tanh", 20, None)],
    ("GridSample", "mode"): [("bilinear", 16, 19), ("nearest", 16, None), ("bicubic", 16, 19),
                             ("linear", 20, None), ("cubic", 20, None)],
    ("GridSample", "padding_mode"): [(v, 16, None) for v in ("zeros", "border", "reflection")],
    ("ImageDecoder", "pixel_format"): [(v, 20, None) for v in ("RGB", "BGR", "Grayscale")],
    ("LinearAttention", "update_rule"): [(v, 27, None) for v in ("linear", "gated", "delta", "gated_delta")],
    ("Pad", "mode"): [("constant", 2, None), ("reflect", 2, None), ("edge", 2, None), ("wrap", 19, None)],
    ("Resize", "mode"): [("nearest", 10, None), ("linear", 10, None), ("cubic", 11, None)],
    ("Resize", "coordinate_transformation_mode"): [
        ("half_pixel", 11, None), ("pytorch_half_pixel", 11, None), ("align_corners", 11, None),
        ("asymmetric", 11, None), ("tf_half_pixel_for_nn", 11, 12), ("tf_crop_and_resize", 11, None),
        ("half_pixel_symmetric", 19, None)],
    ("Resize", "nearest_mode"): [(v, 11, None) for v in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")],
    ("Resize", "keep_aspect_ratio_policy"): [(v, 18, None) for v in ("stretch", "not_larger", "not_smaller")],
    ("RoiAlign", "mode"): [("avg", 10, None), ("max", 10, None)],
    ("RoiAlign", "coordinate_transformation_mode"): [("half_pixel", 16, None), ("output_half_pixel", 16, None)],
    ("StringNormalizer", "case_change_action"): [(v, 10, None) for v in ("LOWER", "UPPER", "NONE")],
    ("TensorScatter", "mode"): [("linear", 24, None), ("circular", 24, None)],
    ("TfIdfVectorizer", "mode"): [(v, 9, None) for v in ("TF", "IDF", "TFIDF")],
    ("Upsample", "mode"): [("nearest", 7, None), ("linear", 7, None)],
}

# String attributes whose value is free text, not a choice: "set" is their domain.
FREE_STRINGS = {("Constant", "value_string"), ("Einsum", "equation"), ("RegexFullMatch", "pattern"),
                ("StringNormalizer", "locale"), ("StringSplit", "delimiter")}

# INT attributes with a 0/1 default that are booleans (others with such a
# default, like axis or group, are numbers: "set").
FLAG_NAMES = {
    "align_corners", "allowzero", "antialias", "ceil_mode", "center_point_box", "count_include_pad",
    "detect_negative", "detect_positive", "exclude_outside", "exclusive", "fmod", "input_forget", "interleaved",
    "inverse", "is_case_sensitive", "is_causal", "keepdims", "largest", "layout", "linear_before_reset", "new_axis",
    "noop_with_empty_axes", "onesided", "periodic", "reverse", "saturate", "select_last_index", "sorted", "spatial",
    "storage_order", "training_mode", "transA", "transB", "upper",
}
INT_ENUMS = {("Attention", "qk_matmul_output_mode"): (0, 1, 2, 3)}
# Operators whose outputs are random draws: tessera's counter-based
# generator draws other numbers than numpy's, so no oracle's values can
# judge them (docs/onnx.md, "Random operators").
RANDOM_OPS = ("Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike")


def schema_versions(first=FIRST_OPSET):
    """{op: [(since, until, schema), ...]}: the default domain's versions in
    effect at opset `first` or later (until None: to the latest)."""
    by = collections.defaultdict(list)
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in ("", "ai.onnx"):
            by[s.name].append(s)
    out = {}
    for op, ss in sorted(by.items()):
        ss.sort(key=lambda s: s.since_version)
        vs = []
        for i, s in enumerate(ss):
            until = ss[i + 1].since_version - 1 if i + 1 < len(ss) else None
            if (until is None or until >= first) and not s.deprecated:
                vs.append((max(s.since_version, first), until, s))
        if vs:
            out[op] = vs
    return out


def _default(attr_schema):
    d = attr_schema.default_value
    if not d.name and not d.type:
        return None
    v = onnx.helper.get_attribute_value(d)
    return v.decode() if isinstance(v, bytes) else v


def domain(op, name, attr_schema, opset):
    """The value keys of attribute `name` of op at opset (see above)."""
    t = attr_schema.type
    if t == onnx.defs.OpSchema.AttrType.STRING and (op, name) in STRING_ENUMS:
        return [v for v, lo, hi in STRING_ENUMS[(op, name)] if lo <= opset and (hi is None or opset <= hi)]
    if t == onnx.defs.OpSchema.AttrType.INT and (op, name) in INT_ENUMS:
        return list(INT_ENUMS[(op, name)])
    if t == onnx.defs.OpSchema.AttrType.INT and name in FLAG_NAMES:
        return [0, 1]
    return ["set"]


def enumerated(op, name, attr_schema):
    """Whether the attribute's domain is a list of values (not "set")."""
    t = attr_schema.type
    return ((t == onnx.defs.OpSchema.AttrType.STRING and (op, name) in STRING_ENUMS) or
            (t == onnx.defs.OpSchema.AttrType.INT and ((op, name) in INT_ENUMS or name in FLAG_NAMES)))


def value_key(op, attr_proto, attr_schema):
    """The key an attribute as a node gives it stands for."""
    if attr_schema is None or not enumerated(op, attr_proto.name, attr_schema):
        return "set"
    v = onnx.helper.get_attribute_value(attr_proto)
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if attr_schema.type == onnx.defs.OpSchema.AttrType.INT and attr_proto.name in FLAG_NAMES:
        return 1 if v else 0
    return v


def default_key(op, name, attr_schema):
    """The key of the value an absent enumerated attribute takes, or None."""
    if not enumerated(op, name, attr_schema):
        return None
    d = _default(attr_schema)
    if d is None:
        return None
    return (1 if d else 0) if name in FLAG_NAMES else d


def node_keys(node, schema):
    """(attr, key) for every attribute of the schema: those the node sets,
    and the defaults of enumerated ones it leaves out."""
    keys = set()
    given = {a.name: a for a in node.attribute}
    for name, a in schema.attributes.items():
        if name in given:
            keys.add((name, value_key(node.op_type, given[name], a)))
        else:
            k = default_key(node.op_type, name, a)
            if k is not None:
                keys.add((name, k))
    return keys
