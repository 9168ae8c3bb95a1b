"""Read and check matrix.yaml. Every error names the file, the line and the key."""
import os

import yaml

TREES = ("6.1", "6.1-patched", "6.12")
VERBS = ("state", "mount", "write", "config", "load", "concurrent", "klog", "hooks", "cmd")
FILTER_KEYS = ("kernel", "arch", "scenario", "config", "tree")
OUTCOMES = ("ok", "freeze")


class MatrixError(Exception):
    pass


class Node(dict):
    """A mapping that remembers the line it started on."""
    line = 0


class LineLoader(yaml.SafeLoader):
    pass


def _mapping(loader, node):
    loader.flatten_mapping(node)
    m = Node()
    m.line = node.start_mark.line + 1
    m.key_lines = {}
    for k, v in node.value:
        key = loader.construct_object(k, deep=True)
        if not isinstance(key, (str, int, float)):
            raise MatrixError(f"line {k.start_mark.line + 1}: a key must be a plain string")
        key = str(key)
        m[key] = loader.construct_object(v, deep=True)
        m.key_lines[key] = k.start_mark.line + 1
    return m


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def expected(value, kernel):
    """The value a kernel must show: a scalar for all, or {kernel: v, default: v}."""
    if isinstance(value, dict):
        return value.get(kernel, value.get("default"))
    return value


class Spec:
    def __init__(self, data, path, root):
        self.path = path
        self.root = root
        self.data = data
        self.kernels = data["kernels"]
        self.scenarios = data["scenarios"]
        self.agree = data.get("agree", [])
        self.sets = data.get("sets", {})

    def err(self, node, key, msg):
        line = getattr(node, "key_lines", {}).get(key, getattr(node, "line", 0))
        raise MatrixError(f"{os.path.basename(self.path)}:{line}: {key}: {msg}")

    def check_keys(self, node, allowed):
        for key in node:
            if key not in allowed:
                self.err(node, key, f"unknown key ({', '.join(allowed)})")

    def arches(self):
        d = os.path.join(self.root, "configs", "arch")
        return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".conf"))

    def validate(self):
        top = self.data
        self.check_keys(top, ("kernels", "scenarios", "agree", "sets"))
        arches = self.arches()
        if not isinstance(self.kernels, dict) or not self.kernels:
            self.err(top, "kernels", "must be a non-empty mapping")
        for name, k in self.kernels.items():
            if not isinstance(k, dict):
                self.err(self.kernels, name, "must be a mapping")
            self.check_keys(k, ("tree", "config", "arches", "scenarios", "about"))
            if str(k.get("tree")) not in TREES:
                self.err(k, "tree", f"must be one of {', '.join(TREES)}, not {k.get('tree')!r}")
            k["tree"] = str(k["tree"])
            cfg = k.get("config")
            if not cfg or not os.path.exists(os.path.join(self.root, "configs", f"{cfg}.config")):
                self.err(k, "config", f"no configs/{cfg}.config")
            for a in k.get("arches", []):
                if a not in arches:
                    self.err(k, "arches", f"unknown arch {a!r} (one of: {', '.join(arches)})")
            k.setdefault("arches", arches)
            if not isinstance(k.get("scenarios", []), list) or not isinstance(self.scenarios, dict):
                self.err(k, "scenarios", "must be a list of scenario names")
            for sc in k.get("scenarios", []):
                if sc not in self.scenarios:
                    self.err(k, "scenarios", f"unknown scenario {sc!r} (one of: {', '.join(self.scenarios)})")
        if not isinstance(self.scenarios, dict) or not self.scenarios:
            self.err(top, "scenarios", "must be a non-empty mapping")
        for name, s in self.scenarios.items():
            if not isinstance(s, dict):
                self.err(self.scenarios, name, "must be a mapping")
            self.check_keys(s, ("about", "kernels", "append", "mode", "steps", "expect", "outcome"))
            if not isinstance(s.get("kernels", []), list):
                self.err(s, "kernels", "must be a list of kernel names")
            for kn in s.get("kernels", []):
                if str(kn) not in self.kernels:
                    self.err(s, "kernels", f"unknown kernel {kn!r} (one of: {', '.join(self.kernels)})")
            if s.get("mode") not in (None, "disabled", "permissive", "enforcing"):
                self.err(s, "mode", "must be disabled, permissive or enforcing")
            steps = s.get("steps")
            if not isinstance(steps, list) or not all(isinstance(x, str) for x in steps):
                self.err(s, "steps", "must be a list of probe steps (strings)")
            for st in steps:
                if st.split(":", 1)[0] not in VERBS:
                    self.err(s, "steps", f"unknown probe step {st!r} (verbs: {', '.join(VERBS)})")
            exp = s.get("expect", {})
            if not isinstance(exp, dict):
                self.err(s, "expect", "must be a mapping observation -> value")
            for key, v in exp.items():
                self.check_value(exp, key, v)
            if "outcome" in s:
                self.check_value(s, "outcome", s["outcome"], OUTCOMES)
        for i, pair in enumerate(self.agree):
            ks = pair.get("kernels") if isinstance(pair, dict) else None
            if not isinstance(ks, list) or len(ks) != 2 or any(str(x) not in self.kernels for x in ks):
                self.err(top, "agree", f"entry {i + 1}: kernels must name two known kernels")
            pair["kernels"] = [str(x) for x in ks]
            pair.setdefault("except", {})
        for name, filters in self.sets.items():
            if not isinstance(filters, list):
                self.err(self.sets, name, "must be a list of filters")
            for f in filters:
                if not isinstance(f, dict):
                    self.err(self.sets, name, "each filter must be a mapping")
                self.check_keys(f, FILTER_KEYS)
        return self

    def check_value(self, node, key, v, allowed=None):
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if k2 != "default" and k2 not in self.kernels:
                    self.err(v, k2, f"not a kernel of this matrix (kernels: {', '.join(self.kernels)})")
                if not isinstance(v2, (str, int)) or (allowed and v2 not in allowed):
                    self.err(v, k2, "expected value must be a string"
                             + (f" in {allowed}" if allowed else ""))
                v[k2] = str(v2)
        elif isinstance(v, (str, int)) and not isinstance(v, bool):
            if allowed and v not in allowed:
                self.err(node, key, f"must be one of {', '.join(allowed)}")
            node[key] = str(v)
        else:
            self.err(node, key, "expected value must be a string or a kernel -> string mapping")

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
                    if "kernels" in scen and kname not in [str(x) for x in scen["kernels"]]:
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
        if attrs[key] not in [str(x) for x in vals]:
            return False
    return True


def load(path, root):
    try:
        with open(path) as f:
            data = yaml.load(f, Loader=LineLoader)
    except OSError as e:
        raise MatrixError(f"cannot read {path}: {e.strerror}")
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise MatrixError(f"{os.path.basename(path)}{where}: not valid YAML: "
                          f"{getattr(e, 'problem', None) or e}")
    if not isinstance(data, dict):
        raise MatrixError(f"{os.path.basename(path)}: must be a mapping at the top")
    for key in ("kernels", "scenarios"):
        if key not in data:
            raise MatrixError(f"{os.path.basename(path)}: missing top-level key '{key}'")
    return Spec(data, path, root).validate()
