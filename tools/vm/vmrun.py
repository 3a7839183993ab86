#!/usr/bin/env python3
"""Runs one command inside Debian's real kernel under qemu (TCG) with a DRM driver.

Implementation of tools/vm/run.sh (see its --help). Builds an initramfs (busybox-static,
the requested binaries with their whole ldd closure at the host paths, optionally Mesa's
kms_swrast GBM closure, the driver modules prepared by tools/vm/prepare.sh), boots
`qemu-system-x86_64 -kernel vmlinux` through the PVH entry, and maps the serial ports:

  ttyS0  kernel console + init messages   -> console log file
  ttyS1  the command's stdout             -> forwarded to our stdout
  ttyS2  the command's stderr             -> forwarded to our stderr
  ttyS3  status lines from init (CADENCE-INIT / -READY / -EXIT <rc> / -SETUP-FAILED)

Exit status: the command's own status, or one of the harness codes below.
"""

import argparse
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

EXIT_USAGE = 2          # bad arguments to run.sh itself (before any VM starts)
EXIT_TIMEOUT = 124      # the VM did not finish within --timeout
EXIT_VM_FAILED = 125    # qemu failed, the kernel did not reach init, or setup failed
EXIT_NOT_PREPARED = 126 # tools/vm/prepare.sh has not been run / cache incomplete

DRIVERS = {
    # driver: (module sets from prepare.sh in load order, qemu device arguments); each set
    # brings one DRM card.
    "vkms": (("vkms",), []),
    # vkms with two outputs (Virtual-1, Virtual-2, each on its own CRTC and vblank timer):
    # vkms2.ko, built by prepare.sh from vkms-two-outputs.patch.
    "vkms2": (("vkms2",), []),
    "bochs": (("bochs",), ["-device", "VGA"]),
    "virtio": (("virtio",), ["-device", "virtio-gpu-pci"]),
    # Two cards in one guest: vkms (hrtimer vblank) and virtio-gpu (no vblank), vkms loaded
    # first. Card numbers follow the order the drivers register in: find a card by its driver
    # (/sys/class/drm/cardN/device/driver), not by its number.
    "vkms+virtio": (("vkms", "virtio"), ["-device", "virtio-gpu-pci"]),
    # No DRM driver and no display device: a machine without any /dev/dri/card*.
    "none": ((), []),
}

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SWIFT_RUNTIME = "/opt/swift/usr/lib/swift/linux"
MESA_DRI = "/usr/lib/x86_64-linux-gnu/dri/kms_swrast_dri.so"
GBM_LIBS = ["/usr/lib/x86_64-linux-gnu/libgbm.so.1", MESA_DRI]


def die(code, message):
    sys.stderr.write("run.sh: %s\n" % message)
    sys.exit(code)


# --------------------------------------------------------------------------- cpio newc ---
class Archive:
    """Minimal writer for the kernel's initramfs format (cpio "newc")."""

    def __init__(self):
        self.entries = {}  # guest path -> (kind, payload, mode)
        self.order = []

    def _put(self, path, kind, payload, mode):
        path = "/" + path.strip("/")
        if path in self.entries:
            return
        parent = os.path.dirname(path)
        if parent != "/" and parent not in self.entries:
            self.add_dir(parent)
        self.entries[path] = (kind, payload, mode)
        self.order.append(path)

    def add_dir(self, path, mode=0o755):
        self._put(path, "dir", None, stat.S_IFDIR | mode)

    def add_file(self, path, host_path, mode=None):
        if mode is None:
            mode = stat.S_IMODE(os.stat(host_path).st_mode)
        self._put(path, "file", host_path, stat.S_IFREG | mode)

    def add_bytes(self, path, data, mode=0o644):
        self._put(path, "bytes", data, stat.S_IFREG | mode)

    def add_symlink(self, path, target):
        self._put(path, "symlink", target, stat.S_IFLNK | 0o777)

    def add_chardev(self, path, major, minor, mode=0o600):
        self._put(path, "chr", (major, minor), stat.S_IFCHR | mode)

    def has(self, path):
        return ("/" + path.strip("/")) in self.entries

    def add_host_path(self, host_path):
        """Adds a host file at the same path, recreating every symlink on the way."""
        host_path = os.path.abspath(host_path)
        parts = host_path.strip("/").split("/")
        cur = ""
        for i, comp in enumerate(parts):
            cur += "/" + comp
            rest = "/".join(parts[i + 1:])
            if os.path.islink(cur):
                target = os.readlink(cur)
                existing = self.entries.get(cur)
                if existing is None:
                    self.add_symlink(cur, target)
                resolved = os.path.normpath(os.path.join(os.path.dirname(cur), target))
                self.add_host_path(resolved + ("/" + rest if rest else ""))
                return
            if rest:
                if cur not in self.entries:
                    self.add_dir(cur)
            else:
                self.add_file(cur, cur)

    def write(self, out):
        ino = 1000
        with open(out, "wb") as f:
            for path in self.order:
                kind, payload, mode = self.entries[path]
                rdev = (0, 0)
                if kind == "file":
                    with open(payload, "rb") as src:
                        data = src.read()
                elif kind == "bytes":
                    data = payload
                elif kind == "symlink":
                    data = payload.encode()
                elif kind == "chr":
                    data, rdev = b"", payload
                else:
                    data = b""
                ino += 1
                self._entry(f, path.lstrip("/"), mode, data, ino,
                            2 if kind == "dir" else 1, rdev)
            self._entry(f, "TRAILER!!!", 0, b"", 0, 1, (0, 0))

    @staticmethod
    def _entry(f, name, mode, data, ino, nlink, rdev):
        name_b = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1],
                  len(name_b), 0]
        header = b"070701" + b"".join(b"%08X" % v for v in fields)
        f.write(header + name_b)
        f.write(b"\0" * ((4 - (len(header) + len(name_b)) % 4) % 4))
        f.write(data)
        f.write(b"\0" * ((4 - len(data) % 4) % 4))


# ------------------------------------------------------------------------ ldd closure ---
def ldd_closure(path):
    """Absolute paths of every shared object `path` loads (empty for static files)."""
    try:
        res = subprocess.run(["ldd", path], capture_output=True, text=True)
    except FileNotFoundError:
        die(EXIT_NOT_PREPARED, "ldd not found on the host")
    text = res.stdout + res.stderr
    if "not a dynamic executable" in text or "statically linked" in text:
        return []
    if res.returncode != 0:
        die(EXIT_USAGE, "ldd %s failed: %s" % (path, text.strip().splitlines()[-1:]))
    libs = []
    for line in res.stdout.splitlines():
        line = line.strip()
        if "=> not found" in line:
            die(EXIT_USAGE, "%s needs %s, which is not found on the host"
                % (path, line.split()[0]))
        if "=>" in line:
            target = line.split("=>", 1)[1].strip().split(" (")[0].strip()
            if target.startswith("/"):
                libs.append(target)
        elif line.startswith("/"):
            libs.append(line.split(" (")[0].strip())
    return libs


# ------------------------------------------------------------------------- init script --
def build_init(modules, out_mount, env, command, cwd, cards=1):
    q = shlex.quote
    lines = [
        "#!/bin/sh",
        "export PATH=/bin:/sbin:/usr/bin:/usr/sbin",
        "mount -t proc proc /proc",
        "mount -t sysfs sysfs /sys",
        "mount -t devtmpfs devtmpfs /dev",
        "mkdir -p /dev/pts /dev/shm /tmp /run /root",
        "mount -t tmpfs tmpfs /tmp",
        "mount -t tmpfs tmpfs /run",
        "mount -t tmpfs tmpfs /dev/shm",
        "mount -t devpts devpts /dev/pts",
        "for t in ttyS1 ttyS2 ttyS3; do stty -F /dev/$t raw -echo; done",
        "status() { echo \"$*\" >/dev/ttyS3; }",
        "now() { cut -d' ' -f1 /proc/uptime; }",
        "fail() { echo \"cadence-vm: setup failed: $*\"; dmesg | tail -n 60;"
        " status \"CADENCE-SETUP-FAILED $*\"; poweroff -f; sleep 5; exit 1; }",
        "status \"CADENCE-INIT $(now)\"",
        "echo \"cadence-vm: init at $(now)s\"",
    ]
    for m in modules:
        lines.append("insmod /lib/modules/%s || fail %s" % (q(m), q("insmod " + m)))
    if cards == 1:
        lines += [
            "n=0",
            "while [ ! -e /dev/dri/card0 ]; do",
            "  n=$((n+1)); [ $n -gt 300 ] && fail 'no /dev/dri/card0 after 30 s'",
            "  sleep 0.1",
            "done",
        ]
    elif cards > 1:
        lines += [
            "n=0",
            "while [ \"$(ls /dev/dri 2>/dev/null | grep -c '^card[0-9]')\" -lt %d ]; do" % cards,
            "  n=$((n+1)); [ $n -gt 300 ] && fail 'fewer than %d /dev/dri/card* after 30 s'" % cards,
            "  sleep 0.1",
            "done",
        ]
    else:
        # --driver none promises a machine without DRM cards: check it.
        lines.append("ls /dev/dri/card* >/dev/null 2>&1 && fail 'a DRM card exists without a driver'")
    if out_mount:
        lines += [
            "mkdir -p /out",
            "mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 cadenceout /out"
            " || fail 'mount /out'",
            "export CADENCE_OUT=/out",
        ]
    for name, value in env:
        lines.append("export %s=%s" % (name, q(value)))
    lines += [
        "status \"CADENCE-READY $(now)\"",
        "echo \"cadence-vm: running command at $(now)s\"",
        "cd %s" % q(cwd),
        " ".join(q(a) for a in command) + " </dev/null >/dev/ttyS1 2>/dev/ttyS2",
        "rc=$?",
        "cd /",
        "echo \"cadence-vm: command exited with $rc at $(now)s; kernel log:\"",
        # The console only gets errors (loglevel=4) while the command runs: printk to a serial
        # console runs with interrupts off and, under TCG, delays vkms' vblank timer.
        "dmesg",
        "sync",
    ]
    if out_mount:
        lines.append("umount /out")
    lines += [
        "status \"CADENCE-EXIT $rc $(now)\"",
        "poweroff -f",
        "sleep 5",
    ]
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------------- main --
def parse(argv):
    if "--" in argv:
        i = argv.index("--")
        opts, command = argv[:i], argv[i + 1:]
    else:
        opts, command = argv, []
    p = argparse.ArgumentParser(
        prog="tools/vm/run.sh",
        usage="tools/vm/run.sh --driver vkms|vkms2|bochs|virtio|vkms+virtio|none [options] -- "
              "COMMAND [ARGS...]",
        description="Run COMMAND as root inside Debian's kernel (qemu TCG) with a DRM "
                    "driver (vkms+virtio: two cards, vkms and virtio-gpu; none: no DRM driver "
                    "and no display device, so no /dev/dri/card*); forwards its stdout/stderr "
                    "and exits with its status.",
        epilog="Harness exit codes: %d bad arguments, %d timeout, %d VM failed (no boot, "
               "module/driver setup failed), %d not prepared (run tools/vm/prepare.sh)."
               % (EXIT_USAGE, EXIT_TIMEOUT, EXIT_VM_FAILED, EXIT_NOT_PREPARED))
    p.add_argument("--driver", required=True, choices=sorted(DRIVERS))
    p.add_argument("--timeout", type=float, default=float(os.environ.get(
        "CADENCE_VM_TIMEOUT", "600")), help="seconds for the whole run (default 600)")
    p.add_argument("--bin", action="append", default=[], metavar="HOSTPATH",
                   help="binary to copy to /bin/<basename> with its ldd closure")
    p.add_argument("--file", action="append", default=[], metavar="HOST[:GUEST]",
                   help="extra file (with its ldd closure if it is an ELF object)")
    p.add_argument("--gbm", action="store_true",
                   help="add Mesa's GBM + kms_swrast_dri.so closure at the host paths")
    p.add_argument("--out-dir", metavar="DIR",
                   help="host directory shared read-write as /out in the guest "
                        "($CADENCE_OUT); the command starts in it")
    p.add_argument("--outputs", type=int, default=1, metavar="N",
                   help="virtio and vkms+virtio only: N virtio-gpu outputs (Virtual-2.. are "
                        "disconnected)")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--mem", type=int, default=int(os.environ.get("CADENCE_VM_MEM", "2048")),
                   help="guest memory in MiB (default 2048: the initramfs carries the binaries "
                        "and Mesa, ~400 MB unpacked)")
    p.add_argument("--console", metavar="FILE", help="save the kernel console log here")
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="report timings (boot to init, total) on stderr")
    args = p.parse_args(opts)
    if not command:
        p.error("missing '-- COMMAND [ARGS...]'")
    args.command = command
    if args.outputs != 1 and "virtio" not in DRIVERS[args.driver][0]:
        p.error("--outputs is only supported with a driver that has virtio-gpu")
    if not 1 <= args.outputs <= 16:
        p.error("--outputs wants 1..16")
    env = []
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name.replace("_", "a").isalnum() or name[0].isdigit():
            p.error("--env wants NAME=VALUE, got %r" % item)
        env.append((name, value))
    args.env = env
    return args


def main(argv):
    args = parse(argv)
    cache = os.environ.get("CADENCE_VM_DIR") or os.path.join(REPO, ".vm")
    try:
        with open(os.path.join(cache, "current")) as f:
            abi = f.read().strip()
    except OSError:
        die(EXIT_NOT_PREPARED, "no prepared kernel in %s: run tools/vm/prepare.sh" % cache)
    kdir = os.path.join(cache, abi)
    vmlinux = os.path.join(kdir, "vmlinux")
    busybox = os.path.join(cache, "busybox")
    for needed in (vmlinux, busybox, os.path.join(kdir, "ready")):
        if not os.path.exists(needed):
            die(EXIT_NOT_PREPARED, "%s missing: run tools/vm/prepare.sh" % needed)
    qemu = shutil.which("qemu-system-x86_64")
    if not qemu:
        die(EXIT_NOT_PREPARED, "qemu-system-x86_64 not found: run tools/vm/prepare.sh")

    def load_set(name):
        try:
            with open(os.path.join(kdir, "load-%s.txt" % name)) as f:
                return [l.strip() for l in f if l.strip()]
        except OSError:
            die(EXIT_NOT_PREPARED, "%s missing: run tools/vm/prepare.sh"
                % os.path.join(kdir, "load-%s.txt" % name))

    module_sets, qemu_dev = DRIVERS[args.driver]
    modules = []
    for name in module_sets:  # each set in its own order; a module shared with an earlier set loads once
        modules += [m for m in load_set(name) if m not in modules]
    if args.out_dir:
        modules += [m for m in load_set("9p") if m not in modules]

    t_start = time.monotonic()
    run_dir = tempfile.mkdtemp(prefix="cadence-vm-")
    try:
        return run(args, kdir, vmlinux, busybox, qemu, qemu_dev, modules, run_dir, t_start)
    finally:
        if args.keep:
            sys.stderr.write("run.sh: run directory kept: %s\n" % run_dir)
        else:
            shutil.rmtree(run_dir, ignore_errors=True)


def run(args, kdir, vmlinux, busybox, qemu, qemu_dev, modules, run_dir, t_start):
    ar = Archive()
    for d in ("/bin", "/dev", "/proc", "/sys", "/tmp", "/run", "/root", "/etc"):
        ar.add_dir(d)
    ar.add_symlink("/sbin", "bin")
    ar.add_chardev("/dev/console", 5, 1)
    ar.add_chardev("/dev/null", 1, 3, 0o666)
    ar.add_bytes("/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"
                                b"nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n")
    ar.add_bytes("/etc/group", b"root:x:0:\nvideo:x:44:\nnogroup:x:65534:\n")

    # Binaries requested by the caller: /bin/<basename>, libraries at the host paths.
    bin_names = set()
    libs = []
    for b in args.bin:
        if not os.path.isfile(b) or not os.access(b, os.X_OK):
            die(EXIT_USAGE, "--bin %s: not an executable file" % b)
        name = os.path.basename(b)
        ar.add_file("/bin/" + name, b)
        bin_names.add(name)
        libs += ldd_closure(b)
    for spec in args.file:
        host, sep, guest = spec.partition(":")
        if not os.path.isfile(host):
            die(EXIT_USAGE, "--file %s: no such file" % host)
        if not sep:
            guest = os.path.abspath(host)
        ar.add_file(guest, host)
        libs += ldd_closure(host)
    if args.gbm:
        for lib in GBM_LIBS:
            if not os.path.exists(lib):
                die(EXIT_NOT_PREPARED, "--gbm: %s missing (apt-get install libgbm-dev "
                                       "libgl1-mesa-dri)" % lib)
            ar.add_host_path(lib)
            libs += ldd_closure(lib)
    for lib in libs:
        ar.add_host_path(lib)
    if libs and os.path.exists("/etc/ld.so.cache"):
        ar.add_file("/etc/ld.so.cache", "/etc/ld.so.cache", 0o644)

    # busybox and its applets (a --bin of the same name wins).
    if "busybox" not in bin_names:
        ar.add_file("/bin/busybox", busybox, 0o755)
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True).stdout
    for applet in applets.split():
        if applet not in bin_names and applet != "busybox":
            ar.add_symlink("/bin/" + applet, "busybox")

    ar.add_dir("/lib/modules")
    for m in modules:
        ar.add_file("/lib/modules/" + m, os.path.join(kdir, "modules", m), 0o644)

    cwd = "/out" if args.out_dir else "/root"
    env = [("HOME", "/root"), ("TERM", "dumb")] + args.env
    ar.add_bytes("/init", build_init(modules, bool(args.out_dir), env, args.command, cwd,
                                     cards=len(DRIVERS[args.driver][0])), 0o755)
    initrd = os.path.join(run_dir, "initramfs.cpio")
    ar.write(initrd)

    paths = {k: os.path.join(run_dir, k) for k in ("console", "stdout", "stderr", "status")}
    for p in paths.values():
        open(p, "wb").close()
    # The guest's clock counts its instructions (1 ns each), not the host's time: a loaded host
    # slows the whole guest down together, so it can no longer make a vblank timer fire while
    # the guest's own work has not run. What the guest measures is what its kernel decided.
    # Idle time still passes at the host's speed (sleep=on): a wait for the host (9p, virtio)
    # takes as long as it really takes, it does not jump to the next timer.
    # CADENCE_VM_ICOUNT=off runs on the host's clock (plain TCG), as before.
    icount = os.environ.get("CADENCE_VM_ICOUNT", "shift=0,sleep=on")
    accel = ["-machine", "pc,accel=tcg"] + (["-icount", icount] if icount != "off" else [])
    cmd = [qemu] + accel + ["-cpu", os.environ.get("CADENCE_VM_CPU", "max"), "-smp", "1",
           "-m", str(args.mem), "-nodefaults", "-no-user-config", "-display", "none",
           "-no-reboot", "-kernel", vmlinux, "-initrd", initrd,
           "-append", "console=ttyS0 loglevel=4 panic=-1 rdinit=/init"]
    for i, k in enumerate(("console", "stdout", "stderr", "status")):
        cmd += ["-chardev", "file,id=s%d,path=%s" % (i, paths[k]), "-serial", "chardev:s%d" % i]
    if args.outputs != 1:
        qemu_dev = ["-device", "virtio-gpu-pci,max_outputs=%d" % args.outputs]
    cmd += qemu_dev
    if args.out_dir:
        out_dir = os.path.abspath(args.out_dir)
        os.makedirs(out_dir, exist_ok=True)
        cmd += ["-virtfs", "local,path=%s,mount_tag=cadenceout,security_model=none,"
                           "id=cadenceout" % out_dir]

    t_boot = time.monotonic()
    qemu_log = open(os.path.join(run_dir, "qemu.log"), "wb")
    # A loaded host delays the vCPU thread by whole time slices, and at 144 Hz (6.9 ms) that
    # shows up as missed vblanks that are the host's, not the guest's. When allowed, run
    # qemu at a higher priority; it only uses CPU while the guest is busy.
    nice = int(os.environ.get("CADENCE_VM_NICE", "-10"))

    rt = int(os.environ.get("CADENCE_VM_RT", "0"))

    def raise_priority():
        try:
            os.nice(nice)
        except OSError:
            pass
        if rt:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(rt))
            except (OSError, AttributeError):
                pass

    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qemu_log, stderr=qemu_log,
                            preexec_fn=raise_priority if nice or rt else None)
    readers = {"stdout": [open(paths["stdout"], "rb"), sys.stdout.buffer],
               "stderr": [open(paths["stderr"], "rb"), sys.stderr.buffer]}

    def pump():
        for key, (src, dst) in readers.items():
            data = src.read()
            if data and dst is not None:
                try:
                    dst.write(data)
                    dst.flush()
                except BrokenPipeError:  # our reader went away; keep the VM running
                    readers[key][1] = None

    status_lines = []
    t_init = None
    exit_seen_at = None
    timed_out = False
    deadline = t_start + args.timeout
    try:
        while True:
            pump()
            with open(paths["status"], "rb") as f:
                status_lines = f.read().decode(errors="replace").splitlines()
            if t_init is None and any(l.startswith("CADENCE-INIT") for l in status_lines):
                t_init = time.monotonic()
            finished = any(l.startswith(("CADENCE-EXIT", "CADENCE-SETUP-FAILED"))
                           for l in status_lines)
            if finished and exit_seen_at is None:
                exit_seen_at = time.monotonic()
            if proc.poll() is not None:
                break
            now = time.monotonic()
            if exit_seen_at is not None and now - exit_seen_at > 15:
                proc.kill()  # guest reported its status but did not power off
                break
            if now > deadline:
                timed_out = True
                proc.kill()
                break
            time.sleep(0.05)
        proc.wait()
        pump()
        with open(paths["status"], "rb") as f:
            status_lines = f.read().decode(errors="replace").splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        qemu_log.close()
    t_end = time.monotonic()

    if args.console:
        shutil.copyfile(paths["console"], args.console)

    def console_tail(n=25):
        with open(paths["console"], "rb") as f:
            lines = f.read().decode(errors="replace").replace("\r", "").splitlines()
        with open(os.path.join(run_dir, "qemu.log"), "rb") as f:
            qlines = f.read().decode(errors="replace").splitlines()
        out = ["  console: " + l for l in lines[-n:]] + ["  qemu: " + l for l in qlines[-10:]]
        return "\n".join(out) + "\n"

    guest = {}
    for l in status_lines:
        parts = l.split()
        if parts:
            guest[parts[0]] = parts[1:]
    if args.verbose:
        msg = "run.sh: driver %s: " % args.driver
        if t_init is not None and "CADENCE-INIT" in guest:
            msg += "init at guest uptime %ss (host %.2f s after qemu start), " % (
                guest["CADENCE-INIT"][0], t_init - t_boot)
        if "CADENCE-READY" in guest:
            msg += "device ready at %ss, " % guest["CADENCE-READY"][0]
        msg += "initramfs %.1f MB, total wall %.2f s\n" % (
            os.path.getsize(initrd) / 1e6, t_end - t_start)
        sys.stderr.write(msg)

    if "CADENCE-EXIT" in guest:
        try:
            return int(guest["CADENCE-EXIT"][0])
        except (IndexError, ValueError):
            pass
    if "CADENCE-SETUP-FAILED" in guest:
        sys.stderr.write("run.sh: VM setup failed (%s): %s\n%s" % (
            args.driver, " ".join(guest["CADENCE-SETUP-FAILED"]), console_tail()))
        return EXIT_VM_FAILED
    if timed_out:
        where = "the command was running" if "CADENCE-READY" in guest else (
            "init was setting up" if "CADENCE-INIT" in guest else "the kernel was booting")
        sys.stderr.write("run.sh: timed out after %.0f s while %s (%s)\n%s" % (
            args.timeout, where, args.driver, console_tail()))
        return EXIT_TIMEOUT
    sys.stderr.write("run.sh: VM stopped without reporting an exit status (%s; qemu "
                     "exit %s)\n%s" % (args.driver, proc.returncode, console_tail()))
    return EXIT_VM_FAILED


if __name__ == "__main__":
    # SIGTERM/SIGHUP (e.g. a CI timeout) unwind normally so qemu is killed, not orphaned.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
