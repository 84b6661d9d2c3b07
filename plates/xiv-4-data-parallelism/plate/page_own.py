"""XIV.4's free inputs, the reader's own model, batch, network and MFU, read and checked in the page's subset."""
# The page runs this module compiled (PAGE's own role; templates/page/own.js puts its answer in the fields); the build
# and the tests run it as Python (custom.check, custom.shape_problem, custom.model_problem). The checks are data,
# the page data's "own" (custom.page_data): a field's rules, the messages, the layer shape's rules.
import math

from generator.api import fixed, num, percent

from .options import SHAPE
from .page_facts import copied, facts

SLIDER = "mfu"  # the one free input of no control: a slider of whole percents, always read
DIGITS = "0123456789"  # ASCII only, as the page's script reads digits
# What trimming removes, on both sides: JavaScript's white space and line ends (Python's strip() would take more)
SPACES = " \t\n\r\x0b\x0c\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
         "\u202f\u205f\u3000\ufeff"
SPECIALS = ["inf", "infinity", "nan"]
HEX = "0123456789abcdef"
ESCAPES = {"\"": "\\\"", "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _digits_only(text):
    """Whether text is one or more ASCII digits."""
    if text == "":
        return False
    for ch in text:
        if DIGITS.find(ch) < 0:
            return False
    return True


def _unsigned(text):
    """text without its one leading + or -."""
    return text[1:] if text[:1] == "+" or text[:1] == "-" else text


def _is_int(t):
    """TOML's whole number, as the reader may type it: digits, with commas or underscores between them."""
    body = _unsigned(t)
    if body == "" or DIGITS.find(body[0]) < 0 or DIGITS.find(body[-1]) < 0:
        return False
    for ch in body:
        if DIGITS.find(ch) < 0 and ch != "," and ch != "_":
            return False
    return True


def _is_float(t):
    """A decimal number: digits with a point (or a point and digits), then an optional exponent."""
    body = _unsigned(t)
    cut = max(body.find("e"), body.find("E"))
    mantissa = body if cut < 0 else body[:cut]
    if cut >= 0 and not _digits_only(_unsigned(body[cut + 1:])):
        return False
    point = mantissa.find(".")
    if point < 0:
        return _digits_only(mantissa)
    whole = mantissa[:point]
    part = mantissa[point + 1:]
    return (whole == "" or _digits_only(whole)) and (part == "" or _digits_only(part)) and whole + part != ""


def parse(text):
    """What a typed value is, as TOML would read it: {"type": "int", "value", "digits" (exact, signed),
    "number" (as a double)}, {"type": "float", "value"}, or {"type": "text", "value": the text}."""
    t = text.strip(SPACES)
    if _is_int(t):
        digits = t.replace(",", "").replace("_", "")
        return {"type": "int", "value": int(digits), "digits": digits, "number": float(digits)}
    if _is_float(t):
        return {"type": "float", "value": float(t)}
    word = _unsigned(t).lower()
    if word in SPECIALS:
        value = math.nan if word == "nan" else -math.inf if t[:1] == "-" else math.inf
        return {"type": "float", "value": value}
    return {"type": "text", "value": text}


def _magnitude(digits):
    """[negative, the digits without sign and leading zeros] of a whole number's text."""
    body = _unsigned(digits)
    start = 0
    while start < len(body) - 1 and body[start] == "0":
        start += 1
    body = body[start:]
    return [digits[:1] == "-" and body != "0", body]


def _compare(digits, bound):
    """-1, 0 or 1 as the whole number digits is below, at or above the whole double bound, digit for digit (a
    double keeps no whole number past 2^53 exactly, Python's int every one)."""
    a = _magnitude(digits)
    b = _magnitude(fixed(bound, 0))
    if a[0] != b[0]:
        return -1 if a[0] else 1
    sign = -1 if a[0] else 1
    if len(a[1]) != len(b[1]):
        return sign if len(a[1]) > len(b[1]) else -sign
    if a[1] == b[1]:
        return 0
    return sign if a[1] > b[1] else -sign


def _order(v, bound):
    """-1, 0 or 1 as the typed number v is below, at or above bound (NaN: None)."""
    if v["type"] == "int" and math.isfinite(bound) and bound == math.floor(bound):
        return _compare(v["digits"], bound)
    x = v["value"]
    if math.isnan(x) or math.isnan(bound):
        return None
    return -1 if x < bound else 1 if x > bound else 0


def passes(test, v):
    """Whether a typed value passes one test of a rule: a test is a name, or [name, bound] (schema.NUMBER_RULES)."""
    name = test[0] if len(test) == 2 else test  # no test's name is shorter than three letters
    number = v["type"] == "int" or v["type"] == "float"
    if name == "int":
        return v["type"] == "int"
    if name == "number":
        return number
    if name == "finite":
        return number and math.isfinite(v["number"] if v["type"] == "int" else v["value"])
    if name == "not_whole_float":
        x = v["value"]
        return not (v["type"] == "float" and math.isfinite(x) and x == math.floor(x) and x > 0)
    if not number:
        return False
    order = _order(v, test[1])
    if order is None:
        return False
    if name == "above":
        return order > 0
    if name == "at_least":
        return order >= 0
    return order <= 0  # at_most


def broken_rule(rules, v):
    """What the typed value v is told by the first rule it fails, or None when it passes them all."""
    for rule in rules:
        tests = rule[0]
        for test in tests:
            if not passes(test, v):
                if "{example}" in rule[1]:  # said of a whole positive float only (not_whole_float)
                    return rule[1].replace("{example}", num(v["value"]).replace(",", "_"))
                return rule[1]
    return None


def quoted(text):
    """The reader's text as a message quotes it: at most 60 characters (57 and an ellipsis), as JSON writes it."""
    count = 0
    cut = ""
    for ch in text:
        if ord(ch) < 0xDC00 or ord(ch) > 0xDFFF:  # a pair of UTF-16 halves in the page is one character
            count += 1
        if count <= 57:
            cut += ch
    if count > 60:
        text = cut + "…"
    out = "\""
    for ch in text:
        if ch in ESCAPES:
            out += ESCAPES[ch]
        elif ord(ch) < 0x20:
            out += "\\u00" + HEX[ord(ch) // 16] + HEX[ord(ch) % 16]
        else:
            out += ch
    return out + "\""


def checked(v, text, rules, got):
    """[the value, None] for a typed value that passes rules, else [None, the message quoting text]."""
    why = broken_rule(rules, v)
    if why is None:
        return [v["value"], None]
    return [None, got.replace("{why}", why).replace("{text}", quoted(text))]


def check(field, text, own):
    """[the value, None] when text is a good value of the field, else [None, the message shown beside it]."""
    return checked(parse(text), text, own["fields"][field]["rules"], own["got"])


def shape_problem(values, shape, rules):
    """[field, message] when the optional layer shape is half given or leaves no room beside the embeddings."""
    given = [k for k in shape if values.get(k) is not None]
    if len(given) > 0 and len(given) < len(shape):
        for k in shape:
            if values.get(k) is None:
                return [k, rules["partial"]]
    room = rules["room"]
    if len(given) > 0:
        least = room["factor"]
        for k in room["over"]:
            least *= values[k]
        if values[room["field"]] <= least:
            return [room["field"], room["say"].replace("{least}", num(least))]
    return None


def model_problem(f, own):
    """Values that pass each field's check can still overflow the model, as presets can (build.check_grid)."""
    for name in own["results"]:
        found = [f[name]] if name in f else [p[name] for p in f["points"]]
        for x in found:
            if not math.isfinite(x) or abs(x) >= own["largest"]:
                return own["too_far"]
    return None


def _counted(sel, own):
    """The free inputs that count for a selection: the slider, and those of a control chosen as the reader's own."""
    return [k for k in own["fields"] if k == SLIDER or sel.get(own["fields"][k]["control"]) == own["id"]]


def _read(base, texts, slider, data):
    """[base with the free inputs that count read in, or None; {field: message}]: each checked, the layer shape
    with the model, then the run (slider: [its typed value, the text a message quotes])."""
    own = data["own"]
    messages = {}
    bad = []
    values = {}
    for field in _counted(base, own):
        if field == SLIDER:
            got = checked(slider[0], slider[1], own["fields"][field]["rules"], own["got"])
        elif field in own["shape"] and texts[field].strip(SPACES) == "":
            continue  # optional, left empty
        else:
            got = check(field, texts[field], own)
        if got[1] is None:
            values[field] = got[0]
        else:
            messages[field] = got[1]
            bad.append(field)
    if len(bad) == 0 and base["model"] == own["id"]:
        problem = shape_problem(values, own["shape"], own["shape_rules"])
        if problem is not None:
            messages[problem[0]] = problem[1]
            bad.append(problem[0])
    if len(bad) > 0:
        return [None, messages]
    sel = copied(base)
    mine = False
    for field in values:
        if field != SLIDER or values[field] != data["presets"]["workshop"]["mfu"]:
            sel[field] = values[field]
            mine = True
    # good values one by one can still overflow the model together; presets alone cannot (the build refuses them)
    if mine and model_problem(facts(sel, data["presets"]), own) is not None:
        for field in _counted(base, own):
            if field != SLIDER:
                messages[field] = own["too_far"]
        return [None, messages]
    return [sel, messages]


def _percent_of(slider_text):
    """The slider's position (whole percents, as text) as a fraction; NaN for what is no number."""
    v = parse(slider_text)
    return math.nan if v["type"] == "text" else v["value"] / 100


def _shown(slider_text):
    """What the slider's output says of its position."""
    x = _percent_of(slider_text)
    return percent(x) if math.isfinite(x) else ""


def own(selection, typed, linked, data):
    """The free inputs read for a selection (the page's, with every control): {"selection": it with the good values
    that count (None while one is bad), "messages": {field: why}, "inputs": {field: the text its input shows},
    "shown": {field: its output's text}}. typed: {field: its input's text}; linked: {field: text} the URL names,
    or None (the inputs are read as typed); the URL's bad values leave the messages and the default of their
    control drawn. With selection None, only "shown" (the slider moves)."""
    own_data = data["own"]
    if selection is None:
        return {"shown": {SLIDER: _shown(typed[SLIDER])}}
    if linked is None:
        slider = [{"type": "float", "value": _percent_of(typed[SLIDER])}, typed[SLIDER]]
        read = _read(selection, typed, slider, data)
        return {"selection": read[0], "messages": read[1], "inputs": {},
                "shown": {SLIDER: _shown(typed[SLIDER])}}
    texts = {}
    inputs = {}
    for field in own_data["fields"]:
        if field in linked:
            texts[field] = linked[field]
        elif field in own_data["shape"] and selection["model"] == own_data["id"] and "params" in linked:
            texts[field] = ""
        else:
            texts[field] = typed[field]
        if field != SLIDER:
            inputs[field] = texts[field]
    workshop = data["presets"]["workshop"]["mfu"]
    if SLIDER in linked:
        slider = [parse(linked[SLIDER]), linked[SLIDER]]
    else:
        slider = [{"type": "float", "value": workshop}, percent(workshop)]
    position = checked(slider[0], slider[1], own_data["fields"][SLIDER]["rules"], own_data["got"])[0]
    inputs[SLIDER] = typed[SLIDER] if position is None else str(math.floor(position * 100 + 0.5))
    shown = {SLIDER: _shown(inputs[SLIDER])}
    first = _read(selection, texts, slider, data)
    if first[0] is not None:
        return {"selection": first[0], "messages": first[1], "inputs": inputs, "shown": shown}
    # what the controls would show without the bad values, with the messages the check left
    fallback = copied(selection)
    for field in own_data["fields"]:
        control = own_data["fields"][field]["control"]
        if field != SLIDER and fallback[control] == own_data["id"]:
            fallback[control] = data["default"][control]
    second = _read(fallback, texts, slider, data)
    messages = copied(second[1])
    for field in first[1]:
        messages[field] = first[1][field]
    return {"selection": fallback if second[0] is None else second[0], "messages": messages, "inputs": inputs,
            "shown": shown}
