"""qemu's option syntax, shared by the fake qemu (which parses what qemu-run.sh gives it)
and the tests (which read the argv the fake recorded). No pytest here: the fake imports it."""


def qemu_opts(s):
    """Comma separated key=value pairs; ",," is a literal comma."""
    out, cur, i = [], "", 0
    while i < len(s):
        if s[i] == ",":
            if s[i + 1:i + 2] == ",":
                cur += ","
                i += 2
                continue
            out.append(cur)
            cur = ""
        else:
            cur += s[i]
        i += 1
    out.append(cur)
    d = {}
    for o in out:
        k, _, v = o.partition("=")
        d[k] = v
    return d
