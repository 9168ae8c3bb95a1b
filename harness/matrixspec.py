"""Read and check matrix.yaml. Every error is one line naming the file, the line and the key.

Reading: scalars as YAML 1.2 reads them, not 1.1: no yes/no/on/off booleans and no floats
(6.10 is the string "6.10", never 6.1), only null, true/false and whole numbers are typed;
a mapping key is always the string written; a key given twice, an alias, a byte that is
not UTF-8 are errors. Checking: the shape against matrix.schema.json (Debian's
python3-jsonschema), then what a schema cannot say: names that must exist, probe steps
that the probe understands, and expectations that some step of the scenario produces.
"""
import json
import os
import re
import sys

import yaml

try:
    import jsonschema
except ImportError:  # a python3 that is not Debian's (a pyenv shim first on PATH)
    _DEB = "/usr/lib/python3/dist-packages"
    if os.path.isdir(_DEB) and _DEB not in sys.path:
        sys.path.append(_DEB)
    try:
        import jsonschema
    except ImportError:
        jsonschema = None

from harness import arch as harness_arch  # noqa: E402  (the arch model, configs/arch/*.yaml)
from harness import yamlread  # noqa: E402

TREES = ("6.1", "6.1-patched", "6.12")
FILTER_KEYS = ("kernel", "arch", "scenario", "config", "tree")
OUTCOMES = ("ok", "freeze")
MODES = ("disabled", "permissive", "enforcing")
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema", "matrix.schema.json")

# What each probe verb reports (tests/guest/probe.c, its "# obs: NAME=VALUE" lines), from
# the step's arguments (VERB:ARGS, split as the probe splits them): an expected key must
# be one of these for some step of its scenario. A name ending in "." is a prefix: "hooks"
# reports one key per hook table it finds, hooks.<symbol>.
STATE_KEYS = ("lsm", "selinuxfs_registered", "selinuxfs_mounted", "attr_current", "enforce")


def _state(a):
    return [f"{a[0] or 'state'}.{k}" for k in STATE_KEYS]


# rie: what the kernel applies under READ_IMPLIES_EXEC, and whether SELinux checked execute
RIE_KEYS = ("context", "setcon", "personality", "mmap", "mprotect", "execmem_denials")


def _concurrent(a):
    return [f"concurrent.{a[0] or 'c'}.writes", f"concurrent.{a[0] or 'c'}.load"]


# verb: (how the probe splits ARGS: max parts, or 0 for none; required parts; keys)
STEPS = {
    "state": (1, 0, _state),                                  # state[:LABEL]
    "mount": (0, 0, lambda a: ["mount"]),                     # mount
    "write": (4, 2, lambda a: [f"write.{a[0]}"]),             # write:LABEL:DATA[:OFF[:UID]]
    "config": (1, 1, lambda a: ["config"]),                   # config:MODE
    "load": (2, 1, lambda a: [f"load.{a[0]}"]),               # load:LABEL[:ARGS]
    "concurrent": (1, 0, _concurrent),                        # concurrent[:LABEL]
    "klog": (2, 2, lambda a: [f"klog.{a[0]}"]),               # klog:LABEL:TEXT
    "hooks": (1, 0, lambda a: ["hooks", "hooks.writable", "hooks.summary", "hooks."]),
    "cmd": (2, 2, lambda a: [f"cmd.{a[0]}"]),                 # cmd:LABEL:PROGRAM [ARG...]
    "wnode": (5, 3, lambda a: [f"write.{a[1]}"]),             # wnode:NODE:LABEL:DATA[:OFF[:UID]]
    "read": (2, 2, lambda a: [f"read.{a[0]}"]),               # read:LABEL:NODE
    "rie": (2, 1, lambda a: [f"rie.{a[0]}.{k}" for k in RIE_KEYS]),  # rie:LABEL[:CONTEXT]
}
VERBS = tuple(STEPS)


class MatrixError(Exception):
    def __str__(self):
        # One line, whatever a value in it holds.
        return " ".join(str(self.args[0]).split("\n")) if self.args else ""


class _Where(Exception):
    """An error found while reading, before the file name is known to the message."""

    def __init__(self, line, key, msg):
        super().__init__(msg)
        self.line, self.key, self.msg = line, key, msg


class Node(dict):
    """A mapping that remembers the line it started on and the line of each key."""
    line = 0


class Seq(list):
    """A list that remembers the line it started on and the line of each item."""
    line = 0


class Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2's few implicit types, string keys, no duplicates, no aliases."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            ev = self.peek_event()
            raise _Where(ev.start_mark.line + 1, f"*{ev.anchor}",
                         "aliases are not supported here: write the value out")
        return super().compose_node(parent, index)


Loader.yaml_implicit_resolvers = {}
Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"),
                             ["~", "n", "N", ""])
Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                             re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# Whole numbers only, as written in decimal, not too long to be one (else a string).
Loader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:0|-?[1-9][0-9]{0,17})$"),
                             list("-0123456789"))


def _mapping(loader, node):
    m = Node()
    m.line = node.start_mark.line + 1
    m.key_lines = {}
    for k, v in node.value:
        line = k.start_mark.line + 1
        if not isinstance(k, yaml.ScalarNode):
            raise _Where(line, "?", "a key must be a plain name, not a list or a mapping")
        key = k.value  # the key as written: 6.10 stays "6.10", yes stays "yes"
        if key in m:
            raise _Where(line, key, f"duplicate key (first at line {m.key_lines[key]})")
        m.key_lines[key] = line
        m[key] = loader.construct_object(v, deep=True)
    return m


def _sequence(loader, node):
    s = Seq(loader.construct_object(c, deep=True) for c in node.value)
    s.line = node.start_mark.line + 1
    s.item_lines = [c.start_mark.line + 1 for c in node.value]
    return s


Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


# libyaml with Loader's types and constructors (harness/yamlread.py says when it is used).
FastLoader = yamlread.twin(Loader)


def _read_yaml(text):
    return yamlread.load(text, Loader, FastLoader)


def expected(value, kernel, arch=None):
    """The value a kernel must show on an arch: a scalar for all, or {arch: v, kernel: v,
    default: v}. An arch key comes first: it is what the arch makes every kernel show (a
    port with no page-table dump), where a kernel key is what that kernel does everywhere."""
    if isinstance(value, dict):
        # kernel: null (its probe never runs, a freeze) holds on every arch
        if kernel in value and value[kernel] is None:
            return None
        if arch is not None and arch in value:
            return value[arch]
        return value.get(kernel, value.get("default"))
    return value


def split_step(step):
    """A probe step as the probe reads it: (verb, [args]) (args padded with "")."""
    verb, _, rest = step.partition(":")
    nmax = STEPS[verb][0] if verb in STEPS else 0
    args = rest.split(":", nmax - 1) if nmax and rest else []
    return verb, args + [""] * (nmax - len(args))


def step_keys(step):
    verb, args = split_step(step)
    return STEPS[verb][2](args)


def _what(v):
    """A value as an error message names it."""
    if v is None:
        return "empty"
    if isinstance(v, bool):
        return f"{str(v).lower()} (a boolean: quote it for a string)"
    if isinstance(v, int):
        return f"the number {v}"
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:40]) + "..."
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a mapping"
    return f"a {type(v).__name__}"


class Spec:
    def __init__(self, data, path, root):
        self.path = path
        self.root = root
        self.data = data
        self.kernels = data["kernels"]
        self.scenarios = data["scenarios"]
        self.agree = data.get("agree", [])
        self.sets = data.get("sets", {})

    def err(self, node, key, msg, item=None):
        """Raise the one-line error for node[key] (for its item-th item, if given)."""
        line = getattr(node, "key_lines", {}).get(key, getattr(node, "line", 0))
        lines = getattr(node.get(key) if isinstance(node, dict) else None, "item_lines", [])
        if item is not None and item < len(lines):
            line = lines[item]
        raise MatrixError(f"{os.path.basename(self.path)}:{line}: {key}: {msg}")

    def arches(self):
        """The arches that boot: those whose data file (configs/arch/<name>.yaml) has boot facts."""
        return harness_arch.names(boot=True)

    # --- the shape, from the schema ----------------------------------------------------
    def check_schema(self):
        if jsonschema is None:
            raise MatrixError("python3-jsonschema is missing: apt-get install python3-jsonschema "
                              "(and run with /usr/bin/python3)")
        try:
            with open(SCHEMA) as f:
                schema = json.load(f)
        except (OSError, ValueError) as e:
            raise MatrixError(f"cannot read the schema {SCHEMA}: {e}")
        validator = jsonschema.Draft7Validator(schema)
        found = [self.locate(e) for e in validator.iter_errors(self.data)]
        if found:
            # The first problem in the file, as a compiler would report it.
            line, key, msg = min(found, key=lambda f: f[0])
            raise MatrixError(f"{os.path.basename(self.path)}:{line}: {key}: {msg}")

    def locate(self, e):
        """(line, key, message) for a schema error."""
        node, line, key = self.data, getattr(self.data, "line", 1), "top level"
        for p in e.absolute_path:
            if isinstance(node, Seq) and isinstance(p, int):
                line = node.item_lines[p]
                key = f"{key}[{p + 1}]"
            elif isinstance(node, Node):
                line = node.key_lines.get(p, line)
                key = p
            node = node[p]
        schema, inst, v = e.schema, e.instance, e.validator
        desc = schema.get("description")
        if "propertyNames" in e.schema_path:
            # e.instance is the key itself, in the mapping at the error's path.
            return (getattr(node, "key_lines", {}).get(inst, line), inst,
                    "must be " + desc if desc else e.message)
        if v == "additionalProperties" and isinstance(inst, dict):
            allowed = list(schema.get("properties", {}))
            extra = [k for k in inst if k not in allowed]
            if extra and allowed:
                return (inst.key_lines.get(extra[0], line), extra[0],
                        f"unknown key ({', '.join(allowed)})")
        if v == "required":
            missing = [k for k in e.validator_value if k not in inst]
            return line, missing[0] if missing else key, f"missing (needed in {key})"
        if v == "enum":
            return line, key, f"must be one of {', '.join(map(str, e.validator_value))}, not {_what(inst)}"
        if v in ("type", "anyOf", "oneOf"):
            names = {"array": "a list", "object": "a mapping", "string": "a string",
                     "integer": "a whole number"}
            t = schema.get("type")
            want = desc or (names.get(t, t) if isinstance(t, str) else " or ".join(names.get(x, x) for x in t or []))
            return line, key, f"must be {want}, not {_what(inst)}"
        if v in ("minItems", "maxItems", "minProperties", "minLength", "pattern"):
            if desc:
                return line, key, f"must be {desc}, not {_what(inst)}"
            return line, key, "must not be empty" if v != "pattern" else f"{_what(inst)} is not allowed"
        return line, key, e.message if len(e.message) < 120 else e.message[:120] + "..."

    # --- what a schema cannot say --------------------------------------------------------
    def validate(self):
        self.check_schema()
        arches = self.arches()
        for name, k in self.kernels.items():
            cfg = k["config"]
            if not os.path.exists(os.path.join(self.root, "configs", f"{cfg}.config")):
                self.err(k, "config", f"no configs/{cfg}.config")
            for i, a in enumerate(k.get("arches", [])):
                if a not in arches:
                    self.err(k, "arches", f"unknown arch {a!r} (one of: {', '.join(arches)})", i)
            k.setdefault("arches", arches)
            for i, sc in enumerate(k.get("scenarios", [])):
                if sc not in self.scenarios:
                    self.err(k, "scenarios", f"unknown scenario {sc!r} (one of: {', '.join(self.scenarios)})", i)
        for name, s in self.scenarios.items():
            for i, kn in enumerate(s.get("kernels", [])):
                if kn not in self.kernels:
                    self.err(s, "kernels", f"unknown kernel {kn!r} (one of: {', '.join(self.kernels)})", i)
            produced = self.check_steps(s)
            exp = s.get("expect", {})
            for key, v in exp.items():
                self.check_value(exp, key, v)
                if key not in produced and not any(p.endswith(".") and key.startswith(p) for p in produced):
                    shown = sorted(produced)
                    self.err(exp, key, "no step of this scenario reports it (its steps report: "
                             + ", ".join(shown[:12]) + (", ..." if len(shown) > 12 else "") + ")")
            if "outcome" in s:
                self.check_value(s, "outcome", s["outcome"])
            self.check_unobservable(name, s)
        for i, pair in enumerate(self.agree):
            ks = pair["kernels"]
            if any(x not in self.kernels for x in ks) or ks[0] == ks[1]:
                self.err(self.data, "agree", f"entry {i + 1}: kernels must name two known kernels", i)
            pair.setdefault("except", Node())
            for key in pair["except"]:
                sname = key.split("/", 1)[0] if "/" in key else None
                if sname is not None and sname not in self.scenarios:
                    self.err(pair["except"], key, f"unknown scenario {sname!r} (one of: {', '.join(self.scenarios)})")
            if not any(x not in self.kernels for x in ks):
                self.check_agree_expectations(pair, i)
        known = {"kernel": list(self.kernels), "scenario": list(self.scenarios), "arch": arches,
                 "config": sorted({x["config"] for x in self.kernels.values()}), "tree": list(TREES)}
        for name, filters in self.sets.items():
            for f in filters:
                for fk, v in f.items():
                    for x in (v if isinstance(v, list) else [v]):
                        if x not in known[fk]:
                            self.err(f, fk, f"set {name}: unknown {fk} {x!r} (one of: {', '.join(known[fk])})")
        return self

    def check_steps(self, s):
        """Each step one the probe understands; returns the keys the steps report."""
        produced = {}
        for i, st in enumerate(s["steps"]):
            verb, args = split_step(st)
            if verb not in STEPS:
                self.err(s, "steps", f"unknown probe step {st!r} (verbs: {', '.join(VERBS)})", i)
            nmax, nreq, _ = STEPS[verb]
            if (nmax == 0 and ":" in st) or not all(args[:max(nreq, 1 if ":" in st else 0)]):
                self.err(s, "steps", f"probe step {st!r} lacks an argument or has one too many "
                         f"(see tests/guest/probe.c)", i)
            if verb == "write" and not all(re.fullmatch(r"[0-9]*", a) for a in args[2:]):
                self.err(s, "steps", f"{st!r}: offset and uid must be whole numbers", i)
            if verb == "config" and args[0] not in MODES:
                self.err(s, "steps", f"{st!r}: the mode must be one of {', '.join(MODES)}", i)
            for key in step_keys(st):
                if key in produced and not key.endswith("."):
                    self.err(s, "steps", f"{st!r} reports {key}, as step {produced[key]} "
                             f"does: give it another label", i)
                produced[key] = i + 1
        return produced

    def runs(self, kname, sname):
        """Does the kernel run the scenario (either may name the other)?"""
        k, s = self.kernels[kname], self.scenarios[sname]
        return ("scenarios" not in k or sname in k["scenarios"]) and ("kernels" not in s or kname in s["kernels"])

    def check_agree_expectations(self, pair, i):
        """An agree pair must agree in the file too: for every scenario both kernels run,
        the same expected value (and outcome) for each observation, or the difference is
        listed under except. Then a run that boots only one of the two (make test boots the
        references only in make matrix) still holds it to the other's values, which came
        from real boots."""
        a, b = pair["kernels"]
        exc = pair["except"]
        for sname, s in self.scenarios.items():
            if not (self.runs(a, sname) and self.runs(b, sname)):
                continue
            wants = dict(s.get("expect", {}))
            wants["outcome"] = s.get("outcome", "ok")
            for key, v in wants.items():
                if key in exc or f"{sname}/{key}" in exc:
                    continue
                va, vb = expected(v, a), expected(v, b)
                if key != "outcome" and (va is None or vb is None):
                    continue
                if va != vb:
                    self.err(self.data, "agree", f"entry {i + 1}: {a} and {b} must agree, but {sname}/{key} "
                             f"expects {va!r} and {vb!r} (list it under except, with the reason)", i)

    def check_unobservable(self, sname, s):
        """A kernel whose expected outcome is not ok never runs the probe: an expectation
        that applies to it could never be checked, so it is refused, not skipped. The
        scenario says so with kernel: null in that observation's mapping."""
        for kname, k in self.kernels.items():
            if "scenarios" in k and sname not in k["scenarios"]:
                continue
            if "kernels" in s and kname not in s["kernels"]:
                continue
            # None first: the kernel's own values; then each arch where the outcome or the
            # expectation has a key of its own
            out_v, exp = s.get("outcome", "ok"), s.get("expect", {})
            for arch in [None] + k["arches"]:
                outcome = expected(out_v, kname, arch)
                if outcome == "ok":
                    continue
                for key, v in exp.items():
                    if arch is not None and not any(isinstance(x, dict) and arch in x for x in (v, out_v)):
                        continue
                    if expected(v, kname, arch) is not None:
                        on = f" on {arch}" if arch else ""
                        self.err(exp, key, f"applies to {kname}{on}, whose outcome is {outcome}: its probe "
                                 f"never runs, so the value could never be checked ({kname}: null says so)")

    def check_value(self, node, key, v):
        """An expected value (or an outcome): a string for all kernels or a mapping kernel ->
        string with an optional default; numbers become their digits."""
        if isinstance(v, dict):
            for k2, v2 in v.items():
                arches = self.arches() if k2 != "default" and k2 not in self.kernels else ()
                if arches and k2 not in arches:
                    self.err(v, k2, f"not a kernel or arch of this matrix (kernels: {', '.join(self.kernels)}; "
                             f"arches: {', '.join(arches)})")
                # null: no expectation for that kernel (its probe never runs, e.g. a freeze)
                v[k2] = None if v2 is None else str(v2)
        else:
            node[key] = str(v)

    def cells(self, set_name, only):
        if set_name not in self.sets:
            raise MatrixError(f"unknown set {set_name!r} (sets: {', '.join(self.sets)})")
        flt = {}
        for part in [p for p in only.split(",") if p]:
            if "=" not in part:
                raise MatrixError(f"ONLY: {part!r} is not key=value")
            k, v = part.split("=", 1)
            if k not in FILTER_KEYS:
                raise MatrixError(f"ONLY: unknown key {k!r} (one of: {', '.join(FILTER_KEYS)})")
            flt.setdefault(k, []).append(v)
        for k, vals in flt.items():
            known = {"kernel": self.kernels, "scenario": self.scenarios, "arch": self.arches(),
                     "config": {x["config"] for x in self.kernels.values()}, "tree": TREES}[k]
            for v in vals:
                if v not in known:
                    raise MatrixError(f"ONLY: unknown {k} {v!r} (one of: {', '.join(known)})")
        out = []
        for kname, k in self.kernels.items():
            for arch in k["arches"]:
                for sname, scen in self.scenarios.items():
                    # A kernel may name the scenarios it runs, a scenario the kernels it
                    # runs on; a cell exists where neither rules it out.
                    if "scenarios" in k and sname not in k["scenarios"]:
                        continue
                    if "kernels" in scen and kname not in scen["kernels"]:
                        continue
                    attrs = {"kernel": kname, "arch": arch, "scenario": sname,
                             "config": k["config"], "tree": k["tree"]}
                    if not any(match(f, attrs) for f in self.sets[set_name]):
                        continue
                    if not all(attrs[key] in vals for key, vals in flt.items()):
                        continue
                    out.append((kname, arch, sname))
        return out


def match(f, attrs):
    for key, v in f.items():
        vals = v if isinstance(v, list) else [v]
        if attrs[key] not in vals:
            return False
    return True


def load(path, root):
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise MatrixError(f"cannot read {path}: {e.strerror}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise MatrixError(f"{name}:{line}: not valid UTF-8 (byte 0x{raw[e.start]:02x})")
    try:
        data = _read_yaml(text)
    except _Where as e:
        raise MatrixError(f"{name}:{e.line}: {e.key}: {e.msg}")
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f":{mark.line + 1}" if mark else ""
        raise MatrixError(f"{name}{where}: not valid YAML: {e.problem or e.context or 'syntax error'}")
    except yaml.reader.ReaderError as e:
        line = text[:e.position].count("\n") + 1
        raise MatrixError(f"{name}:{line}: not valid YAML: character #x{e.character:04x} is not allowed")
    except yaml.YAMLError as e:
        raise MatrixError(f"{name}: not valid YAML: {' '.join(str(e).split())}")
    except RecursionError:
        raise MatrixError(f"{name}: not valid here: nested too deeply")
    if not isinstance(data, dict):
        raise MatrixError(f"{name}: must be a mapping at the top")
    for key in ("kernels", "scenarios"):
        if key not in data:
            raise MatrixError(f"{name}: missing top-level key '{key}'")
    return Spec(data, path, root).validate()
