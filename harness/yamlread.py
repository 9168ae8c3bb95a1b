"""YAML text read by libyaml where that gives what the pure-Python parser gives, by the
pure-Python parser otherwise (its errors are the messages a user sees).

Reading matrix.yaml and the arch data files was most of a harness command's start-up with
the pure-Python parser. libyaml differs from it in two ways that matter here: it takes a tab
as spacing where the pure-Python parser refuses it, and it composes an alias as the anchored
node itself without a way to stop there. So a text with a tab, a text with a node met twice
and any fault go to the pure-Python loader.
"""
import yaml


def twin(loader):
    """libyaml's loader with LOADER's resolvers and constructors (the same values and types
    from a text both read), or None where python3-yaml has no libyaml."""
    if not hasattr(yaml, "CSafeLoader"):
        return None
    fast = type("C" + loader.__name__, (yaml.CSafeLoader,), {})
    # LOADER's own tables, shared on purpose: whatever it makes of a scalar or a mapping,
    # its twin makes of it too.
    fast.yaml_implicit_resolvers = loader.yaml_implicit_resolvers
    fast.yaml_constructors = loader.yaml_constructors
    return fast


def _no_alias(node):
    """Whether the composed NODE has no node twice."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            return False
        seen.add(id(n))
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                todo += (k, v)
        elif isinstance(n, yaml.SequenceNode):
            todo += n.value
    return True


def load(text, loader, fast):
    """The data of TEXT as LOADER reads it, read by FAST (twin(LOADER)) where it can be."""
    if fast is not None and "\t" not in text:
        reader = fast(text)
        try:
            node = reader.get_single_node()
            if node is not None and _no_alias(node):
                return reader.construct_document(node)
        except Exception:  # noqa: BLE001 (any fault: LOADER reads it again and says what)
            pass
        finally:
            reader.dispose()
    return yaml.load(text, Loader=loader)
