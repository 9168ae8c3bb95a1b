"""The arch model: one data file per architecture, configs/arch/<name>.yaml, read here only.

A file holds the build facts (kernel ARCH, cross compiler and its Debian package, the boot
image path), make arch-check's starting point (defconfig, the full image, extra options),
and, for an arch that boots, the QEMU facts (binary and package, machine, CPU, extra
options, console, virtio transport, the payload disk's bus, qemu-user binary for
debootstrap, the page-table dump, the boot and payload timeouts). Shell scripts read the
same facts through `python3 -m harness.arch shell NAME`, so there is one parser. Adding a booted arch is its data file, its lean config fragment
(configs/arch/<name>.config) and a matrix line.

    python3 -m harness.arch shell NAME     KEY='value' lines for a shell's eval
    python3 -m harness.arch names [--boot] the arch names, one line
"""
import os
import re
import shlex
import sys

import yaml

from harness import ROOT, yamlread

NAME_RE = re.compile(r"^[a-z0-9_]+$")
VIRTIO = ("pci", "ccw", "device")
# The bus of the payload disk: virtio-blk beside the root disk (vdb), or virtio-scsi
# (sda) where virtio-blk disks come up in no fixed order and root=/dev/vda would be a race.
PAYLOAD_DISK = ("blk", "scsi")


class ArchError(Exception):
    pass


def folder():
    # HARNESS_ARCH_DIR: another folder of data files (the arch-check fault tests use one).
    return os.environ.get("HARNESS_ARCH_DIR") or os.path.join(ROOT, "configs", "arch")


def names(boot=False):
    d = folder()
    out = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".yaml") and NAME_RE.match(f[:-5]))
    if boot:
        out = [n for n in out if load(n).boot]
    return out


def _field(data, path, kind, name, default=None):
    cur = data
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            if default is not None:
                return default
            raise ArchError(f"configs/arch/{name}.yaml: missing {path}")
        cur = cur[part]
    if kind is str and cur is None:
        cur = ""
    if not isinstance(cur, kind) or (kind is int and isinstance(cur, bool)):
        what = {int: "whole number", str: "string", list: "list"}.get(kind, kind.__name__)
        raise ArchError(f"configs/arch/{name}.yaml: {path} must be a {what}")
    return cur


class Boot:
    def __init__(self, data, name):
        f = lambda p, k=str, d=None: _field(data, p, k, name, d)  # noqa: E731
        self.qemu = f("boot.qemu")
        self.qemu_pkg = f("boot.qemu_pkg")
        self.machine = f("boot.machine")
        self.cpu = f("boot.cpu")
        self.extra = [str(x) for x in f("boot.extra", list, [])]
        # vCPUs: two, unless the board starts every vCPU in the kernel (Malta without a
        # CPU that has MIPS MT or a Coherence Manager: a second one boots the kernel again)
        self.smp = f("boot.smp", int, 2)
        if not 1 <= self.smp <= 2:
            raise ArchError(f"configs/arch/{name}.yaml: boot.smp must be 1 or 2 (the machine has 2 cores)")
        self.console = f("boot.console")
        self.virtio = f("boot.virtio")
        if self.virtio not in VIRTIO:
            raise ArchError(f"configs/arch/{name}.yaml: boot.virtio must be one of {', '.join(VIRTIO)}")
        self.payload_disk = f("boot.payload_disk", str, "blk")
        if self.payload_disk not in PAYLOAD_DISK:
            raise ArchError(f"configs/arch/{name}.yaml: boot.payload_disk must be one of {', '.join(PAYLOAD_DISK)}")
        self.qemu_user = f("boot.qemu_user", str, "")
        self.ptdump = f("boot.ptdump", str, "")
        # Seconds under TCG: from qemu's start to the payload's (systemd starting the
        # harness service), and for the payload itself. Past them a boot is lab trouble.
        self.boot_timeout = f("boot.timeouts.boot", int)
        self.payload_timeout = f("boot.timeouts.payload", int)
        for what, v in (("boot", self.boot_timeout), ("payload", self.payload_timeout)):
            if not 1 <= v <= 43200:
                raise ArchError(f"configs/arch/{name}.yaml: boot.timeouts.{what} must be 1 to 43200 seconds")


class Arch:
    def __init__(self, name, data):
        f = lambda p, k=str, d=None: _field(data, p, k, name, d)  # noqa: E731
        self.name = name
        self.deb_arch = f("deb_arch")
        self.karch = f("build.karch")
        self.cross_compile = f("build.cross_compile", str, "")
        self.cross_pkg = f("build.cross_pkg", str, "")
        self.kimage = f("build.kimage", str, "")
        self.defconfig = f("check.defconfig")
        self.check_image = f("check.image", str, "")
        self.check_config = [str(x) for x in f("check.config", list, [])]
        self.boot = Boot(data, name) if "boot" in data else None
        if self.boot and not self.kimage:
            raise ArchError(f"configs/arch/{name}.yaml: an arch that boots needs build.kimage")

    def shell(self):
        """The facts as the shell variables the scripts use."""
        v = {"ARCH_NAME": self.name, "DEB_ARCH": self.deb_arch, "KARCH": self.karch,
             "CROSS_COMPILE": self.cross_compile, "CROSS_PKG": self.cross_pkg,
             "KIMAGE": self.kimage, "DEFCONFIG": self.defconfig, "IMAGE": self.check_image,
             "CHECK_CONFIG": "\n".join(self.check_config), "BOOTS": "yes" if self.boot else "no"}
        b = self.boot
        if b:
            v.update({"QEMU": b.qemu, "QEMU_PKG": b.qemu_pkg, "QEMU_MACHINE": b.machine,
                      "QEMU_CPU": b.cpu, "QEMU_EXTRA": " ".join(b.extra), "QEMU_SMP": str(b.smp), "CONSOLE": b.console,
                      "VIRTIO": b.virtio, "PAYLOAD_DISK": b.payload_disk, "QEMU_USER": b.qemu_user,
                      "PTDUMP": b.ptdump,
                      "BOOT_TIMEOUT": str(b.boot_timeout), "PAYLOAD_TIMEOUT": str(b.payload_timeout)})
        return "".join(f"{k}={shlex.quote(val)}\n" for k, val in v.items())


# One matrix load reads every data file: libyaml where it reads what SafeLoader reads
# (harness/yamlread.py).
_FAST = yamlread.twin(yaml.SafeLoader)
# What a file held, parsed once per process (again if its bytes change: the tests rewrite
# data files).
_read_cache = {}


def load(name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ArchError(f"bad arch name {name!r} (a plain name from configs/arch/)")
    path = os.path.join(folder(), name + ".yaml")
    if not os.path.isfile(path):
        raise ArchError(f"unknown arch '{name}' (one of: {' '.join(names())})")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise ArchError(f"configs/arch/{name}.yaml: cannot read it ({e.strerror})")
    key = (path, raw)
    if key not in _read_cache:
        _read_cache[key] = _parse(name, raw)
    return Arch(name, _read_cache[key])


def _parse(name, raw):
    try:
        text = raw.decode("utf-8")
        data = yamlread.load(text, yaml.SafeLoader, _FAST)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ArchError(f"configs/arch/{name}.yaml: not valid YAML ({str(e).splitlines()[0]})")
    if not isinstance(data, dict):
        raise ArchError(f"configs/arch/{name}.yaml: not a mapping")
    return data


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "shell":
            sys.stdout.write(load(argv[1]).shell())
        elif argv[:1] == ["names"] and argv[1:] in ([], ["--boot"]):
            print(" ".join(names(boot=argv[1:] == ["--boot"])))
        else:
            print("usage: python3 -m harness.arch shell NAME | names [--boot]", file=sys.stderr)
            return 2
    except ArchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
