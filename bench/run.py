#!/usr/bin/python3
"""torchonnx against torch.onnx 1.13, side by side: bench/run.sh runs this.

Usage: /usr/bin/python3 bench/run.py [--quick] [--models a,b,...] [--runs N]
           [--module-runs M] [--ort-runs K] [--models-dir DIR] [--work-dir DIR]
           [--results-dir DIR] [--keep]

For each model: the write floor (3 runs), then --runs rounds of, in this order,
  torchonnx in-process   build/bench/torchonnx_bench_export (times export_model only)
  torchonnx CLI          /usr/bin/time around `torchonnx export` (whole process, peak RSS)
  torch.onnx (.pt)       /usr/bin/time around bench/torch_onnx_export.py --pt (torch.jit.load
                         of the same .pt; in-process time of torch.onnx.export, whole process,
                         peak RSS)
  torch.onnx (module)    the same with --module (the nn.Module, traced by torch.onnx.export);
                         only in the first --module-runs rounds (default 1)
  torchonnx (Python)     torch_onnx_export.py --module --exporter torchonnx: torchonnx.export
                         (the Python package) on the same nn.Module, every round
  torch.onnx 2.6 (.pt)   torch_onnx_export.py --pt in the Debian 13 root (scripts/debian13.sh,
                         python3-torch 2.6): the modern anchor; only in the first
                         --modern-runs rounds (default 1), skipped where that root is not made
each a fresh process, after a sync and a drop of the page cache, with the model's .pt then read
once into the cache (warm: as `cp model.pt` is timed, and as a file just saved or downloaded is);
then, for the GPT models past the memory limit (--memory-limit, default 1 GiB), one export
inside a cgroup v1 memory limit; then node/initializer counts and file sizes of the last round's exports,
a correctness check of both exports in ONNX Runtime against libtorch's outputs
(tools/verify/verify.mjs), and their ONNX Runtime latency (bench/ort_latency.mjs).
Writes RESULTS.md and results.json in --results-dir (default bench/).
"""

import argparse
import datetime
import fcntl
import glob
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
# The lock the project's builds take turns on (bench/run.sh builds under it).
BUILD_LOCK = "/tmp/torchonnx-build.lock"

FULL_MODELS = ["resnet50", "vit_b_16", "bert_base", "gpt_355m", "gpt_700m"]
QUICK_MODELS = ["resnet50", "gpt_tiny"]
GPT_MODELS = {"gpt_355m", "gpt_700m", "gpt_tiny"}

# The issue's targets.
SPEEDUP_TARGET = 20.0         # in-process export time, torch.onnx / torchonnx
WRITE_FLOOR_TARGET = 1.5      # torchonnx in-process time / write floor (issue 22)
RSS_TARGET = 0.15             # (peak RSS - baseline) / weight bytes, GPT models (issue 22)
PROCESS_TARGET = 1.0          # whole-process CLI / (--version + 2x cp model.pt), GPT models
LATENCY_TARGET = 1.0          # ORT latency, torchonnx / torch.onnx ...
LATENCY_NOISE = 0.05          # ... within this much noise
PROTOBUF_LIMIT = (1 << 31) - 1
# ONNX Runtime's outputs against libtorch's: |a - b| <= atol + rtol * |b|, with atol scaled to
# the outputs' range (verify_atol).
VERIFY_RTOL = 1e-3
VERIFY_ATOL_SCALE = 1e-5

# The issue's torch.onnx measurements (in-process torch.onnx.export, 2 cores), for reference.
ISSUE_TORCH_ONNX_SECONDS = {"resnet50": 2.4, "vit_b_16": 22, "bert_base": 13, "gpt_355m": 68,
                            "gpt_700m": 111}

EXPORTERS = ["torchonnx", "torch_onnx", "torch_onnx_module", "torch_onnx_26", "torchonnx_python"]
LABEL = {"torchonnx": "torchonnx", "torch_onnx": "torch.onnx (.pt)",
         "torchonnx_python": "torchonnx.export (Python, nn.Module)",
         "torch_onnx_module": "torch.onnx (nn.Module)",
         "torch_onnx_26": "torch.onnx 2.6 (.pt, Debian 13)"}
# The Debian 13 root of scripts/debian13.sh, where torch.onnx 2.6 runs.
DEBIAN13_ROOT = os.environ.get("TORCHONNX_DEBIAN13_ROOT", "/var/cache/torchonnx/debian13")


def log(msg):
    print("bench: " + msg, flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run(cmd, timeout, time_file=None, cwd=None, warm=(), cgroup=None):
    """Runs cmd; returns (rc, stdout, stderr, seconds, peak_rss_kb) with /usr/bin/time when
    time_file is given (seconds and peak RSS of the whole process). The files in `warm` are read
    into the page cache first; `cgroup`: a cgroup v1 folder the process runs in."""
    full = cmd
    if time_file:
        full = ["/usr/bin/time", "-f", "%e %M", "-o", time_file] + cmd
    # Every measured process starts from the same state: no dirty pages of the one before it
    # (the other exporter's gigabytes still being written back would slow this one's writes) and,
    # where we may (root), an empty page cache, so that no run pays for reclaiming what the run
    # before it left. Inputs are then read from disk, for both exporters alike.
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
    except OSError:
        pass
    for path in warm:
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
    enter = None
    if cgroup:
        def enter():
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
    t0 = time.monotonic()
    try:
        p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=cwd, text=True, stdin=subprocess.DEVNULL, preexec_fn=enter)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -1, e.stdout or "", (e.stderr or "") + "\ntimed out after %ds" % timeout
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
    wall = time.monotonic() - t0
    seconds, rss = wall, None
    if time_file and os.path.exists(time_file):
        with open(time_file) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        try:
            s, m = lines[-1].split()
            seconds, rss = float(s), int(m)
        except (IndexError, ValueError):
            pass
        os.remove(time_file)
    return rc, out, err, seconds, rss


def last_json(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


def tail(text, n=6):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def folder_bytes(folder):
    total = 0
    for dirpath, _, files in os.walk(folder):
        for f in files:
            total += os.path.getsize(os.path.join(dirpath, f))
    return total


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build_dir)
        self.cli = os.path.join(self.build, "torchonnx")
        self.timer = os.path.join(self.build, "bench", "torchonnx_bench_export")
        self.models_dir = os.path.abspath(args.models_dir)
        self.work = os.path.abspath(args.work_dir)
        self.timeout = args.timeout
        self.cli_flags = []
        self.results = {}
        self.debian13 = args.modern_runs > 0 and self.have_debian13()

    # -- setup ----------------------------------------------------------------------------

    def check_tools(self):
        for exe in (self.cli, self.timer):
            if not os.access(exe, os.X_OK):
                sys.exit("bench: %s is missing: build the targets torchonnx_cli and "
                         "torchonnx_bench_export first" % exe)
        self.snapshot_binaries()
        help_text = subprocess.run([self.cli, "export", "--help"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True).stdout
        if "--quiet" in help_text:
            self.cli_flags.append("--quiet")
        if not os.path.isdir(os.path.join(ROOT, "tools", "verify", "node_modules",
                                          "onnxruntime-node")):
            sys.exit("bench: tools/verify/node_modules/onnxruntime-node is missing "
                     "(npm ci in tools/verify)")

    def snapshot_binaries(self):
        """Copies the two programs and libtorchonnx.so* into the work folder and runs those, so
        that a rebuild in build/ during the run (which can take long) cannot break it or mix two
        versions. The copy is made under the build lock that bench/run.sh builds under."""
        lib = os.path.join(self.build, "libtorchonnx.so")
        if not os.path.exists(lib):
            return  # a static build: the programs carry the library
        bindir = os.path.join(self.work, "bin")
        os.makedirs(bindir, exist_ok=True)
        lock = None
        if os.path.exists(BUILD_LOCK):
            lock = open(BUILD_LOCK)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            # libtorchonnx.so.X.Y (the SONAME the programs load) and its links, as files.
            libs = glob.glob(os.path.join(self.build, "libtorchonnx.so*"))
            for src in [self.cli, self.timer] + libs:
                shutil.copy2(src, os.path.join(bindir, os.path.basename(src)))
            # The Python package (its _C finds libtorchonnx.so through LD_LIBRARY_PATH too).
            package = os.path.join(self.build, "python", "torchonnx")
            if os.path.isdir(package):
                shutil.rmtree(os.path.join(bindir, "python"), ignore_errors=True)
                shutil.copytree(package, os.path.join(bindir, "python", "torchonnx"),
                                ignore=shutil.ignore_patterns("__pycache__"))
        finally:
            if lock:
                lock.close()
        self.cli = os.path.join(bindir, os.path.basename(self.cli))
        self.timer = os.path.join(bindir, os.path.basename(self.timer))
        # The programs find libtorchonnx.so through their RUNPATH (build/), which
        # LD_LIBRARY_PATH overrides.
        paths = [bindir] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
        os.environ["LD_LIBRARY_PATH"] = ":".join(paths)

    def make_models(self, names):
        cmd = [PY, os.path.join(HERE, "make_models.py"), self.models_dir] + names
        log("making models: " + " ".join(names))
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            sys.exit("bench: make_models.py failed")

    def meta(self, name):
        with open(os.path.join(self.models_dir, name + ".json")) as f:
            return json.load(f)

    def pt(self, name):
        return os.path.join(self.models_dir, name + ".pt")

    def inputs(self, name):
        return os.path.join(self.models_dir, name)

    # -- one export of each kind ----------------------------------------------------------

    def run_timer(self, name, out_dir):
        out = os.path.join(fresh_dir(out_dir), "model.onnx")
        rc, so, se, _, _ = run([self.timer, self.pt(name), "--inputs", self.inputs(name), "-o",
                                out], self.timeout, warm=[self.pt(name)])
        j = last_json(so) if rc == 0 else None
        if j is None:
            return {"error": "torchonnx_bench_export exit %d: %s" % (rc, tail(se))}
        return {"export_seconds": j["export_seconds"], "load_seconds": j["load_seconds"],
                "timer_peak_rss_kb": j["peak_rss_kb"]}

    def run_cli(self, name, out_dir):
        out = os.path.join(fresh_dir(out_dir), "model.onnx")
        cmd = [self.cli, "export", self.pt(name), "-o", out, "--inputs", self.inputs(name)]
        rc, so, se, secs, rss = run(cmd + self.cli_flags, self.timeout,
                                    os.path.join(self.work, "time.txt"), warm=[self.pt(name)])
        if rc != 0:
            return {"error": "torchonnx export exit %d: %s" % (rc, tail(se))}
        return {"process_seconds": secs, "peak_rss_kb": rss}

    def run_cli_limited(self, name, out_dir, limit_bytes):
        """`torchonnx export` inside a cgroup v1 memory limit (issue 22: a model larger than the
        memory it is allowed). A process over the limit is killed; page cache is reclaimed
        within it. None where the memory controller is not writable (not root, cgroup v2)."""
        base = "/sys/fs/cgroup/memory"
        if not os.access(base, os.W_OK):
            return None
        cg = os.path.join(base, "torchonnx-bench-%d" % os.getpid())
        try:
            os.mkdir(cg)
            with open(os.path.join(cg, "memory.limit_in_bytes"), "w") as f:
                f.write(str(limit_bytes))
        except OSError as e:
            log("memory limit: %s" % e)
            return None
        try:
            out = os.path.join(fresh_dir(out_dir), "model.onnx")
            cmd = [self.cli, "export", self.pt(name), "-o", out, "--inputs", self.inputs(name)]
            rc, so, se, secs, rss = run(cmd + self.cli_flags, self.timeout,
                                        os.path.join(self.work, "time.txt"), cgroup=cg)
            with open(os.path.join(cg, "memory.max_usage_in_bytes")) as f:
                cgroup_peak = int(f.read())
            with open(os.path.join(cg, "memory.failcnt")) as f:
                failcnt = int(f.read())
            ok = rc == 0 and os.path.exists(out)
            return {"limit_bytes": limit_bytes, "exit_code": rc, "ok": ok,
                    "process_seconds": secs, "peak_rss_kb": rss,
                    "cgroup_max_usage_bytes": cgroup_peak, "cgroup_failcnt": failcnt,
                    "file_bytes": folder_bytes(out_dir) if ok else None,
                    "error": None if ok else tail(se)}
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
            try:
                os.rmdir(cg)
            except OSError as e:
                log("memory limit: could not remove %s: %s" % (cg, e))

    def run_torch_onnx(self, name, out_dir, module, python_api=False):
        out = os.path.join(fresh_dir(out_dir), "model.onnx")
        cmd = [PY, os.path.join(HERE, "torch_onnx_export.py")]
        cmd += ["--module", name] if module else ["--pt", self.pt(name)]
        if python_api:  # torchonnx.export, the package the build made
            cmd = ["env", "PYTHONPATH=" + os.path.join(os.path.dirname(self.cli), "python")] + cmd
            cmd += ["--exporter", "torchonnx"]
        cmd += ["--inputs", self.inputs(name), "-o", out]
        rc, so, se, secs, rss = run(cmd, self.timeout, os.path.join(self.work, "time.txt"),
                                    warm=[self.pt(name)])
        j = last_json(so) if rc == 0 else None
        if j is None:
            return {"error": "torch_onnx_export.py exit %d: %s" % (rc, tail(se))}
        return {"export_seconds": j["export_seconds"], "load_seconds": j["load_seconds"],
                "process_seconds": secs, "peak_rss_kb": rss}

    def have_debian13(self):
        """Whether torch.onnx 2.6 can run: the Debian 13 root exists with python3-torch."""
        return (os.path.exists(os.path.join(DEBIAN13_ROOT, ".torchonnx-root")) and
                bool(glob.glob(os.path.join(DEBIAN13_ROOT, "usr/lib/python3/dist-packages/torch/"
                                            "__init__.py"))))

    def run_torch_onnx_26(self, name, out_dir):
        """torch.onnx 2.6 on the same .pt, in the Debian 13 root (the checkout and /tmp are
        bind-mounted there at their own paths; the work folder must be under one of them). The
        whole-process time includes entering the root (~0.1 s)."""
        out = os.path.join(fresh_dir(out_dir), "model.onnx")
        cmd = ["bash", os.path.join(ROOT, "scripts", "debian13.sh"), PY,
               os.path.join(HERE, "torch_onnx_export.py"), "--pt", self.pt(name),
               "--inputs", self.inputs(name), "-o", out]
        rc, so, se, secs, rss = run(cmd, self.timeout, os.path.join(self.work, "time.txt"),
                                    warm=[self.pt(name)])
        j = last_json(so) if rc == 0 else None
        if j is None:
            return {"error": "torch_onnx_export.py (Debian 13) exit %d: %s" % (rc, tail(se))}
        # The exporter's own peak (the root's bash and chroot are small; /usr/bin/time's %M is
        # the largest process it waited for).
        return {"export_seconds": j["export_seconds"], "load_seconds": j["load_seconds"],
                "process_seconds": secs, "peak_rss_kb": j.get("peak_rss_kb") or rss}

    def stats(self, onnx_path):
        rc, so, se, _, _ = run([self.timer, "--stats", onnx_path], self.timeout)
        j = last_json(so) if rc == 0 else None
        if j is None:
            return {"error": "--stats exit %d: %s" % (rc, tail(se))}
        j["file_bytes"] = folder_bytes(os.path.dirname(onnx_path))
        return j

    def write_floor(self, nbytes, folder):
        times = []
        for _ in range(3):
            rc, so, se, _, _ = run([self.timer, "--write-floor", str(nbytes), "--dir", folder],
                                   self.timeout)
            j = last_json(so) if rc == 0 else None
            if j is None:
                log("write floor failed: " + tail(se))
                return None, []
            times.append(j["seconds"])
        return median(times), times

    def cp_seconds(self, name, folder):
        """`cp model.pt` with the .pt in the page cache (issue 22's whole-process anchor): one
        untimed copy to warm the cache, then the median of 3."""
        dest = os.path.join(folder, "copy.pt")
        times = []
        for i in range(4):
            os.sync()
            t0 = time.monotonic()
            rc = subprocess.run(["cp", self.pt(name), dest]).returncode
            if rc != 0:
                log("cp %s failed" % name)
                return None
            if i > 0:
                times.append(time.monotonic() - t0)
            os.remove(dest)
        return median(times)

    def version_seconds(self):
        """Whole-process `torchonnx --version` (loading libtorch and exiting), median of 3, each
        measured as the exports are (run(): caches dropped first)."""
        times = []
        for _ in range(3):
            rc, _, se, secs, _ = run([self.cli, "--version"], self.timeout,
                                     os.path.join(self.work, "time.txt"))
            if rc != 0:
                log("torchonnx --version failed: " + tail(se))
                return None
            times.append(secs)
        return median(times)

    def verify(self, onnx_path, expected_dir, atol):
        rc, so, se, _, _ = run(["node", os.path.join(ROOT, "tools", "verify", "verify.mjs"),
                                onnx_path, expected_dir, "--rtol", str(VERIFY_RTOL), "--atol",
                                "%.3g" % atol], self.timeout)
        return {"ok": rc == 0, "report": tail(so + se, 4), "rtol": VERIFY_RTOL, "atol": atol}

    def latency(self, onnx_paths, name):
        """ORT latency of several exports of one model, run in turn in one process."""
        rc, so, se, _, _ = run(["node", os.path.join(HERE, "ort_latency.mjs")] + onnx_paths +
                               ["--inputs", self.inputs(name), "--runs", str(self.args.ort_runs)],
                               self.timeout)
        j = last_json(so) if rc == 0 else None
        if j is None:
            err = {"error": "ort_latency.mjs exit %d: %s" % (rc, tail(se))}
            return [err for _ in onnx_paths]
        return j["models"]

    # -- the benchmark --------------------------------------------------------------------

    def baseline(self):
        """Peak RSS of each exporter's process exporting a 20-parameter model."""
        base = {}
        cli = self.run_cli("baseline", os.path.join(self.work, "baseline", "torchonnx"))
        tor = self.run_torch_onnx("baseline", os.path.join(self.work, "baseline", "torch_onnx"),
                                  module=False)
        base["torchonnx_rss_kb"] = cli.get("peak_rss_kb")
        base["version_seconds"] = self.version_seconds()
        base["torch_onnx_rss_kb"] = tor.get("peak_rss_kb")
        for k, v in (("torchonnx", cli), ("torch_onnx", tor)):
            if "error" in v:
                log("baseline %s failed: %s" % (k, v["error"]))
        shutil.rmtree(os.path.join(self.work, "baseline"), ignore_errors=True)
        return base

    def bench_model(self, name):
        meta = self.meta(name)
        r = {"meta": meta, "runs": {e: [] for e in EXPORTERS}}
        mdir = os.path.join(self.work, name)
        os.makedirs(mdir, exist_ok=True)
        floor, floor_runs = self.write_floor(meta["weight_bytes"], mdir)
        r["write_floor_seconds"], r["write_floor_runs"] = floor, floor_runs
        r["cp_seconds"] = self.cp_seconds(name, mdir)
        log("%s: %.0f MB of weights, write floor %s s" % (
            name, meta["weight_bytes"] / 1e6, "%.3f" % floor if floor is not None else "?"))
        dirs = {"timer": os.path.join(mdir, "torchonnx_timer"),
                "torchonnx": os.path.join(mdir, "torchonnx"),
                "torch_onnx": os.path.join(mdir, "torch_onnx"),
                "torch_onnx_module": os.path.join(mdir, "torch_onnx_module"),
                "torch_onnx_26": os.path.join(mdir, "torch_onnx_26"),
                "torchonnx_python": os.path.join(mdir, "torchonnx_python")}
        for i in range(self.args.runs):
            t = self.run_timer(name, dirs["timer"])
            shutil.rmtree(dirs["timer"], ignore_errors=True)
            c = self.run_cli(name, dirs["torchonnx"])
            r["runs"]["torchonnx"].append(dict(t, **c) if "error" not in t else t)
            if "error" in c:
                r["runs"]["torchonnx"][-1]["error"] = c["error"]
            self.show(name, i, "torchonnx", r["runs"]["torchonnx"][-1])
            p = self.run_torch_onnx(name, dirs["torchonnx_python"], module=True, python_api=True)
            r["runs"]["torchonnx_python"].append(p)
            self.show(name, i, "torchonnx_python", p)
            if self.args.only_torchonnx:
                continue
            o = self.run_torch_onnx(name, dirs["torch_onnx"], module=False)
            r["runs"]["torch_onnx"].append(o)
            self.show(name, i, "torch_onnx", o)
            if i < self.args.module_runs:
                m = self.run_torch_onnx(name, dirs["torch_onnx_module"], module=True)
                r["runs"]["torch_onnx_module"].append(m)
                self.show(name, i, "torch_onnx_module", m)
            if i < self.args.modern_runs and self.debian13:
                m = self.run_torch_onnx_26(name, dirs["torch_onnx_26"])
                r["runs"]["torch_onnx_26"].append(m)
                self.show(name, i, "torch_onnx_26", m)
        if name in GPT_MODELS and meta["weight_bytes"] > self.args.memory_limit > 0:
            lim = self.run_cli_limited(name, os.path.join(mdir, "limited"),
                                       self.args.memory_limit)
            r["memory_limit"] = lim
            if lim:
                log("%s inside a %.0f MB memory limit: %s, %.2f s, peak RSS %.0f MB" % (
                    name, lim["limit_bytes"] / 2**20, "exported" if lim["ok"] else
                    "FAILED (exit %d)" % lim["exit_code"], lim["process_seconds"],
                    (lim["peak_rss_kb"] or 0) / 1024))

        # The last round's exports: counts, sizes, correctness, latency.
        expected = os.path.join(mdir, "expected")
        check = os.path.join(mdir, "check")
        fresh_dir(check)
        rc, _, se, _, _ = run([self.cli, "export", self.pt(name), "-o",
                               os.path.join(check, "model.onnx"), "--inputs", self.inputs(name),
                               "--save-test-data", fresh_dir(expected)] + self.cli_flags,
                              self.timeout)
        shutil.rmtree(check, ignore_errors=True)
        have_expected = rc == 0
        if not have_expected:
            log("%s: could not compute libtorch's outputs: %s" % (name, tail(se)))
        r["stats"], r["verify"], r["latency"] = {}, {}, {}
        atol = verify_atol(expected) if have_expected else None
        timed = []
        for e in EXPORTERS:
            path = os.path.join(dirs[e], "model.onnx")
            if not os.path.exists(path):
                continue
            r["stats"][e] = self.stats(path)
            if e in ("torch_onnx_module", "torch_onnx_26"):
                continue  # counts only (torch_onnx_module: the same graph as torch_onnx's)
            if have_expected:
                r["verify"][e] = self.verify(path, expected, atol)
            if e == "torchonnx_python":
                continue  # checked, no latency (the core's graph: the torchonnx column's)
            timed.append((e, path))
        if timed:
            for (e, _), lat in zip(timed, self.latency([p for _, p in timed], name)):
                r["latency"][e] = lat
        for e, _ in timed:
            log("%s: %s: %s nodes, %s initializers, %.1f MB, ORT %s ms, %s" % (
                name, LABEL[e], r["stats"][e].get("nodes"), r["stats"][e].get("initializers"),
                r["stats"][e].get("file_bytes", 0) / 1e6,
                "%.1f" % r["latency"][e]["median_ms"] if "median_ms" in r["latency"][e]
                else "failed", "matches libtorch" if r["verify"].get(e, {}).get("ok")
                else "DOES NOT match libtorch / not checked"))
        if not self.args.keep:
            shutil.rmtree(mdir, ignore_errors=True)
        return r

    def show(self, name, i, exporter, run_result):
        if "error" in run_result:
            log("%s run %d %s: FAILED: %s" % (name, i + 1, LABEL[exporter], run_result["error"]))
            return
        log("%s run %d %s: export %.3f s, process %.2f s, peak RSS %.0f MB" % (
            name, i + 1, LABEL[exporter], run_result.get("export_seconds", float("nan")),
            run_result.get("process_seconds", float("nan")),
            (run_result.get("peak_rss_kb") or 0) / 1024))


# ---------------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------------


def verify_atol(expected_dir):
    """verify.mjs's atol for a model: VERIFY_ATOL_SCALE times the largest |output| (at least
    VERIFY_ATOL_SCALE): float32 rounding through dozens of layers is relative to the outputs'
    range, so a fixed atol fails on deep models' logits near zero."""
    sys.dont_write_bytecode = True  # no __pycache__ in bench/
    sys.path.insert(0, HERE)
    import make_models  # torch: only in the bench's own process
    largest = 1.0
    for f in sorted(os.listdir(expected_dir)):
        if f.startswith("output_") and f.endswith(".pb"):
            t = make_models.read_tensor_proto(os.path.join(expected_dir, f))
            if t.is_floating_point() and t.numel():
                largest = max(largest, float(t.abs().max()))
    return VERIFY_ATOL_SCALE * largest


def summarize(r):
    """Medians per exporter and metric."""
    s = {}
    for e in EXPORTERS:
        runs = [x for x in r["runs"][e] if "error" not in x]
        errors = [x["error"] for x in r["runs"][e] if "error" in x]
        s[e] = {
            "runs": len(runs),
            "errors": errors,
            "export_seconds": median(x.get("export_seconds") for x in runs),
            "process_seconds": median(x.get("process_seconds") for x in runs),
            "peak_rss_kb": median(x.get("peak_rss_kb") for x in runs),
        }
        st = r["stats"].get(e, {})
        for k in ("nodes", "initializers", "file_bytes", "initializer_bytes", "external_bytes"):
            s[e][k] = st.get(k)
        s[e]["ops"] = st.get("ops", {})
        lat = r["latency"].get(e, {})
        s[e]["ort_median_ms"] = lat.get("median_ms")
        s[e]["ort_runs"] = lat.get("runs")
        v = r["verify"].get(e)
        s[e]["matches_libtorch"] = None if v is None else v["ok"]
        s[e]["verify_report"] = None if v is None else v["report"]
    return s


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def targets(results, baseline):
    """Each of the issue's targets, computed from the numbers: a list of (target, model, value
    text, met: True/False/None)."""
    out = []
    for name, r in results.items():
        if name not in FULL_MODELS:
            continue  # a smoke-test model (--quick): not one of the issue's benchmark models
        s = r["summary"]
        t, o, m = s["torchonnx"], s["torch_onnx"], s["torch_onnx_module"]
        sp = ratio(o["export_seconds"], t["export_seconds"])
        spm = ratio(m["export_seconds"], t["export_seconds"])
        out.append(("speed: torch.onnx (.pt) / torchonnx in-process >= %gx" % SPEEDUP_TARGET, name,
                    fmt_x(sp), None if sp is None else sp >= SPEEDUP_TARGET))
        if spm is not None:
            out.append(("speed: torch.onnx (nn.Module) / torchonnx in-process >= %gx" %
                        SPEEDUP_TARGET, name, fmt_x(spm), spm >= SPEEDUP_TARGET))
        wf = ratio(t["export_seconds"], r["write_floor_seconds"])
        out.append(("disk: torchonnx in-process <= %gx the write floor" % WRITE_FLOOR_TARGET, name,
                    fmt_x(wf), None if wf is None else wf <= WRITE_FLOOR_TARGET))
        if name in GPT_MODELS and name != "gpt_tiny":
            base = baseline.get("torchonnx_rss_kb")
            if t["peak_rss_kb"] is not None and base is not None:
                x = (t["peak_rss_kb"] - base) * 1024 / r["meta"]["weight_bytes"]
                out.append(("memory: (peak RSS - baseline) / weight bytes <= %g (GPT models)" %
                            RSS_TARGET, name, "%.2f" % x, x <= RSS_TARGET))
            else:
                out.append(("memory: (peak RSS - baseline) / weight bytes <= %g (GPT models)" %
                            RSS_TARGET, name, "not measured", None))
            version, cp = baseline.get("version_seconds"), r.get("cp_seconds")
            x = ratio(t["process_seconds"], None if version is None or cp is None
                      else version + 2 * cp)
            out.append(("whole process: torchonnx CLI <= --version + 2x cp model.pt (GPT models)",
                        name, fmt_x(x), None if x is None else x <= PROCESS_TARGET))
            lim = r.get("memory_limit")
            if lim:
                out.append(("memory: exports inside a %.0f MB memory limit (weights %.0f MB)" % (
                    lim["limit_bytes"] / 2**20, r["meta"]["weight_bytes"] / 2**20), name,
                    "exported in %.2f s" % lim["process_seconds"] if lim["ok"] else
                    "exit %d" % lim["exit_code"], lim["ok"]))
        if r["meta"]["weight_bytes"] > PROTOBUF_LIMIT:
            ok = t["matches_libtorch"]
            ext = t["external_bytes"]
            out.append((">2 GB: loads and runs in ONNX Runtime with libtorch's results", name,
                        "%s, %.2f GB external data" % (
                            "matches" if ok else "does not match / not checked",
                            (ext or 0) / 1e9), bool(ok) and bool(ext)))
        nc = ratio(t["nodes"], o["nodes"])
        out.append(("graph: node count <= torch.onnx's", name,
                    "%s vs %s" % (fmt(t["nodes"], "%d"), fmt(o["nodes"], "%d")),
                    None if nc is None else t["nodes"] <= o["nodes"]))
        lr = ratio(t["ort_median_ms"], o["ort_median_ms"])
        out.append(("graph: ORT latency ratio <= %g (+%d%% noise)" % (LATENCY_TARGET,
                                                                     LATENCY_NOISE * 100),
                    name, fmt_x(lr), None if lr is None else lr <= LATENCY_TARGET + LATENCY_NOISE))
        out.append(("correct: torchonnx's export matches libtorch in ONNX Runtime", name,
                    "yes" if t["matches_libtorch"] else "no / not checked",
                    t["matches_libtorch"]))
    return out


def fmt_x(x):
    return "n/a" if x is None else "%.2fx" % x


def fmt(v, spec="%.3f", scale=1.0):
    return "-" if v is None else spec % (v * scale)


def machine_info(bench):
    info = {"nproc": os.cpu_count(), "platform": platform.platform()}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["ram_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/loadavg") as f:
            info["loadavg_at_start"] = f.read().split()[:3]
    except OSError:
        pass
    info["libtorch"] = subprocess.run(
        [PY, "-c", "import torch; print(torch.__version__)"], stdout=subprocess.PIPE,
        text=True).stdout.strip()
    blas = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    info["blas"] = os.path.realpath(blas) if os.path.exists(blas) else "unknown"
    info["torchonnx"] = subprocess.run([bench.cli, "--version"], stdout=subprocess.PIPE,
                                       text=True).stdout.strip()
    try:
        with open(os.path.join(ROOT, "tools", "verify", "node_modules", "onnxruntime-node",
                               "package.json")) as f:
            info["onnxruntime_node"] = json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        info["onnxruntime_node"] = "unknown"
    return info


def write_markdown(path, report):
    res = report["models"]
    names = list(res)
    base = report["baseline"]
    L = []
    a = L.append
    a("# torchonnx vs torch.onnx 1.13 and 2.6: benchmark results")
    a("")
    if report.get("quick"):
        a("**A `--quick` smoke check (resnet50 and a 2-layer GPT, 1 run), not the benchmark: "
          "run `bash bench/run.sh` for the issue's models.**")
        a("")
    if report.get("only_torchonnx"):
        a("**`--only-torchonnx`: torch.onnx was not run; its columns and most targets are "
          "empty.**")
        a("")
    a("Written by `bench/run.sh` (do not edit by hand). Reproduce with:")
    a("")
    a("    " + report["command"])
    a("")
    m = report["machine"]
    a("- Date: %s (run took %.0f min)" % (report["date"], report["duration_seconds"] / 60))
    a("- Machine: %s cores (%s), %s GB RAM, %s; load average at start %s, at end %s" % (
        m["nproc"], m.get("cpu", "?"), m.get("ram_gb", "?"), m["platform"],
        " ".join(m.get("loadavg_at_start", [])), " ".join(report.get("loadavg_at_end", []))))
    a("- libtorch %s (Debian; the same for torchonnx and torch.onnx), BLAS %s; %s; "
      "onnxruntime-node %s" % (m["libtorch"], m["blas"], m["torchonnx"],
                               m["onnxruntime_node"]))
    a("- Runs: %d per exporter and model (alternating, each a fresh process), medians shown; "
      "torch.onnx (nn.Module): %d run(s); torch.onnx 2.6: %d run(s); every export after a "
      "sync and a drop of the page cache, with the .pt then read into the cache; ORT latency: both exports loaded in one process and "
      "run in turn, median of up to %d runs each (fewer past 120 s) after 2 warm-up runs, "
      "default intra-op threads" % (report["runs"], report["module_runs"],
                                    report.get("modern_runs", 0), report["ort_runs"]))
    a("- Memory baseline (peak RSS exporting a 20-parameter model): torchonnx %s MB, "
      "torch.onnx %s MB" % (fmt(base.get("torchonnx_rss_kb"), "%.0f", 1 / 1024),
                            fmt(base.get("torch_onnx_rss_kb"), "%.0f", 1 / 1024)))
    a("")
    a("Columns: **torchonnx** is `torchonnx export` (CLI) for whole-process time and RSS, and "
      "`torchonnx::export_model` timed in `torchonnx_bench_export` for the in-process time. "
      "**torch.onnx (.pt)** is `torch.onnx.export` on the same `.pt` loaded with "
      "`torch.jit.load` (a ScriptModule: torch.onnx does not trace). **torch.onnx (nn.Module)** "
      "is `torch.onnx.export` on the original nn.Module rebuilt with the same seed (identical "
      "weights; torch.onnx traces it inside export, the usual way to call it). "
      "**torch.onnx 2.6 (.pt)** is torch.onnx 2.6 (`dynamo=False`, its default) on the same "
      "`.pt`, run in the Debian 13 root of `scripts/debian13.sh` (python3-torch 2.6; its "
      "whole-process time includes entering the root, ~0.1 s). Ratios are "
      "torch.onnx (.pt) / torchonnx unless said otherwise. A `-` is a failed or skipped "
      "measurement (see Failures at the end).")
    a("")

    def row(cells):
        a("| " + " | ".join(cells) + " |")

    def table(title, header, rows):
        a("## " + title)
        a("")
        row(header)
        row(["---"] * len(header))
        for r in rows:
            row(r)
        a("")

    S = {n: res[n]["summary"] for n in names}
    table("In-process export time (s)",
          ["model", "torchonnx", "torch.onnx (.pt)", "speed-up", "torch.onnx (nn.Module)",
           "speed-up", "torch.onnx 2.6 (.pt)", "speed-up", "issue's torch.onnx"],
          [[n, fmt(S[n]["torchonnx"]["export_seconds"]),
            fmt(S[n]["torch_onnx"]["export_seconds"]),
            fmt_x(ratio(S[n]["torch_onnx"]["export_seconds"],
                        S[n]["torchonnx"]["export_seconds"])),
            fmt(S[n]["torch_onnx_module"]["export_seconds"]),
            fmt_x(ratio(S[n]["torch_onnx_module"]["export_seconds"],
                        S[n]["torchonnx"]["export_seconds"])),
            fmt(S[n]["torch_onnx_26"]["export_seconds"]),
            fmt_x(ratio(S[n]["torch_onnx_26"]["export_seconds"],
                        S[n]["torchonnx"]["export_seconds"])),
            str(ISSUE_TORCH_ONNX_SECONDS.get(n, "-"))] for n in names])
    table("Python API: `torchonnx.export` vs `torch.onnx.export` on the same nn.Module (each "
          "traces it, in a fresh Python process; in-process export time and the process's peak "
          "RSS)",
          ["model", "torchonnx.export (s)", "torch.onnx.export (s)", "speed-up",
           "torchonnx.export peak RSS (MB)", "torch.onnx.export peak RSS (MB)", "ratio",
           "torchonnx.export matches libtorch"],
          [[n, fmt(S[n]["torchonnx_python"]["export_seconds"]),
            fmt(S[n]["torch_onnx_module"]["export_seconds"]),
            fmt_x(ratio(S[n]["torch_onnx_module"]["export_seconds"],
                        S[n]["torchonnx_python"]["export_seconds"])),
            fmt(S[n]["torchonnx_python"]["peak_rss_kb"], "%.0f", 1 / 1024),
            fmt(S[n]["torch_onnx_module"]["peak_rss_kb"], "%.0f", 1 / 1024),
            fmt_x(ratio(S[n]["torch_onnx_module"]["peak_rss_kb"],
                        S[n]["torchonnx_python"]["peak_rss_kb"])),
            yes_no(S[n]["torchonnx_python"]["matches_libtorch"])] for n in names])
    version = base.get("version_seconds")
    table("Whole-process time (s): load, export, exit",
          ["model", "torchonnx CLI", "torch.onnx (.pt) script", "ratio",
           "torch.onnx (nn.Module) script", "torch.onnx 2.6 (.pt) script", "ratio",
           "`cp model.pt` (warm cache)",
           "`torchonnx --version`", "CLI / (--version + 2x cp)"],
          [[n, fmt(S[n]["torchonnx"]["process_seconds"], "%.2f"),
            fmt(S[n]["torch_onnx"]["process_seconds"], "%.2f"),
            fmt_x(ratio(S[n]["torch_onnx"]["process_seconds"],
                        S[n]["torchonnx"]["process_seconds"])),
            fmt(S[n]["torch_onnx_module"]["process_seconds"], "%.2f"),
            fmt(S[n]["torch_onnx_26"]["process_seconds"], "%.2f"),
            fmt_x(ratio(S[n]["torch_onnx_26"]["process_seconds"],
                        S[n]["torchonnx"]["process_seconds"])),
            fmt(res[n].get("cp_seconds"), "%.2f"), fmt(version, "%.2f"),
            fmt_x(ratio(S[n]["torchonnx"]["process_seconds"],
                        None if version is None or res[n].get("cp_seconds") is None
                        else version + 2 * res[n]["cp_seconds"]))] for n in names])
    table("Peak RSS (MB)",
          ["model", "weights (MB)", "torchonnx", "torch.onnx (.pt)", "ratio",
           "torch.onnx (nn.Module)", "torch.onnx 2.6 (.pt)",
           "torchonnx (RSS - baseline) / weights",
           "torch.onnx (.pt) (RSS - baseline) / weights"],
          [[n, "%.0f" % (res[n]["meta"]["weight_bytes"] / 1e6),
            fmt(S[n]["torchonnx"]["peak_rss_kb"], "%.0f", 1 / 1024),
            fmt(S[n]["torch_onnx"]["peak_rss_kb"], "%.0f", 1 / 1024),
            fmt_x(ratio(S[n]["torch_onnx"]["peak_rss_kb"], S[n]["torchonnx"]["peak_rss_kb"])),
            fmt(S[n]["torch_onnx_module"]["peak_rss_kb"], "%.0f", 1 / 1024),
            fmt(S[n]["torch_onnx_26"]["peak_rss_kb"], "%.0f", 1 / 1024),
            rss_over_weights(S[n]["torchonnx"]["peak_rss_kb"], base.get("torchonnx_rss_kb"),
                             res[n]["meta"]["weight_bytes"]),
            rss_over_weights(S[n]["torch_onnx"]["peak_rss_kb"], base.get("torch_onnx_rss_kb"),
                             res[n]["meta"]["weight_bytes"])] for n in names])
    limited = [(n, res[n]["memory_limit"]) for n in names if res[n].get("memory_limit")]
    if limited:
        table("Inside a memory limit: `torchonnx export` in a cgroup v1 memory limit smaller than "
              "the weights (page cache counts against the limit and is reclaimed; a process "
              "over it is killed)",
              ["model", "weights (MB)", "limit (MB)", "exported", "whole process (s)",
               "peak RSS (MB)", "cgroup peak incl. page cache (MB)", "file (MB)"],
              [[n, "%.0f" % (res[n]["meta"]["weight_bytes"] / 1e6),
                "%.0f" % (x["limit_bytes"] / 2**20),
                "yes" if x["ok"] else "**no** (exit %d)" % x["exit_code"],
                fmt(x["process_seconds"], "%.2f"), fmt(x["peak_rss_kb"], "%.0f", 1 / 1024),
                "%.0f" % (x["cgroup_max_usage_bytes"] / 2**20),
                fmt(x["file_bytes"], "%.1f", 1e-6)] for n, x in limited])
    table("Write floor: the weight bytes written to a file in the same folder and fsync'd "
          "(median of 3)",
          ["model", "parameters", "weight bytes", "write floor (s)", "torchonnx in-process / "
           "floor", "torch.onnx (.pt) / floor"],
          [[n, "%d" % res[n]["meta"]["parameters"], "%d" % res[n]["meta"]["weight_bytes"],
            fmt(res[n]["write_floor_seconds"]),
            fmt_x(ratio(S[n]["torchonnx"]["export_seconds"], res[n]["write_floor_seconds"])),
            fmt_x(ratio(S[n]["torch_onnx"]["export_seconds"], res[n]["write_floor_seconds"]))]
           for n in names])
    table("File size (MB): model file + external data files",
          ["model", "torchonnx", "of which external", "torch.onnx (.pt)", "of which external",
           "ratio (torchonnx / torch.onnx)"],
          [[n, fmt(S[n]["torchonnx"]["file_bytes"], "%.1f", 1e-6),
            fmt(S[n]["torchonnx"]["external_bytes"], "%.1f", 1e-6),
            fmt(S[n]["torch_onnx"]["file_bytes"], "%.1f", 1e-6),
            fmt(S[n]["torch_onnx"]["external_bytes"], "%.1f", 1e-6),
            fmt_x(ratio(S[n]["torchonnx"]["file_bytes"], S[n]["torch_onnx"]["file_bytes"]))]
           for n in names])
    table("Graph: node and initializer counts",
          ["model", "torchonnx nodes", "torch.onnx (.pt) nodes", "ratio (torchonnx / "
           "torch.onnx)", "torch.onnx (nn.Module) nodes", "torchonnx initializers",
           "torch.onnx (.pt) initializers", "torch.onnx 2.6 (.pt) nodes"],
          [[n, fmt(S[n]["torchonnx"]["nodes"], "%d"), fmt(S[n]["torch_onnx"]["nodes"], "%d"),
            fmt_x(ratio(S[n]["torchonnx"]["nodes"], S[n]["torch_onnx"]["nodes"])),
            fmt(S[n]["torch_onnx_module"]["nodes"], "%d"),
            fmt(S[n]["torchonnx"]["initializers"], "%d"),
            fmt(S[n]["torch_onnx"]["initializers"], "%d"),
            fmt(S[n]["torch_onnx_26"]["nodes"], "%d")] for n in names])
    a("Op types whose counts differ (torchonnx / torch.onnx (.pt)):")
    a("")
    for n in names:
        to, tr = S[n]["torchonnx"]["ops"], S[n]["torch_onnx"]["ops"]
        diff = ["%s %d/%d" % (op, to.get(op, 0), tr.get(op, 0))
                for op in sorted(set(to) | set(tr)) if to.get(op, 0) != tr.get(op, 0)]
        a("- %s: %s" % (n, ", ".join(diff) if diff else "none"))
    a("")
    table("ONNX Runtime latency (ms, median)",
          ["model", "torchonnx", "torch.onnx (.pt)", "ratio (torchonnx / torch.onnx)",
           "torchonnx matches libtorch", "torch.onnx matches libtorch"],
          [[n, fmt(S[n]["torchonnx"]["ort_median_ms"], "%.1f"),
            fmt(S[n]["torch_onnx"]["ort_median_ms"], "%.1f"),
            fmt_x(ratio(S[n]["torchonnx"]["ort_median_ms"],
                        S[n]["torch_onnx"]["ort_median_ms"])),
            yes_no(S[n]["torchonnx"]["matches_libtorch"]),
            yes_no(S[n]["torch_onnx"]["matches_libtorch"])] for n in names])

    a("## Targets")
    a("")
    a("Computed from the medians above by bench/run.py, for the issue's benchmark models (%s) "
      "among those run." % ", ".join(FULL_MODELS))
    if not report["targets"]:
        a("")
        a("None of them was run: no target is evaluated.")
    a("")
    row(["target", "model", "value", "met"])
    row(["---"] * 4)
    for target, model, value, met in report["targets"]:
        row([target, model, value, "yes" if met else ("not measured" if met is None else "**no**")])
    a("")
    # Why a speed target can fail on a machine: what it asks, next to the disk's floor.
    a("### What the 20x target asks here")
    a("")
    a("torch.onnx (.pt) in-process / 20 is the time the speed target allows; the write floor is "
      "writing the weight bytes once with fsync. Where the allowance is near or below the floor, "
      "the target asks for writing the weights faster than this disk takes them: torchonnx's "
      "in-process time is then mostly that write (its other stages take milliseconds to tens of "
      "milliseconds: `TORCHONNX_STAGE_TIMES=1`, `build/bench/torchonnx_bench_scale --model`), and "
      "the spread of its runs is the disk's.")
    a("")
    row(["model", "allowed: torch.onnx / 20 (s)", "write floor (s)", "allowed / floor",
         "torchonnx runs: fastest / median / slowest (s)"])
    row(["---"] * 5)
    for n in names:
        allowed = S[n]["torch_onnx"]["export_seconds"]
        allowed = allowed / 20 if allowed is not None else None
        runs = sorted(x["export_seconds"] for x in res[n]["runs"]["torchonnx"]
                      if x.get("export_seconds") is not None)
        spread = " / ".join("%.3f" % v for v in (runs[0], median(runs), runs[-1])) if runs else "-"
        row([n, fmt(allowed), fmt(res[n]["write_floor_seconds"]),
             fmt_x(ratio(allowed, res[n]["write_floor_seconds"])), spread])
    a("")
    failures = [(n, e, err) for n in names for e in EXPORTERS
                for err in S[n][e]["errors"]]
    mismatches = [(n, e, S[n][e]["verify_report"]) for n in names for e in EXPORTERS
                  if S[n][e]["matches_libtorch"] is False]
    if failures or mismatches:
        a("## Failures")
        a("")
        for n, e, err in failures:
            a("- %s, %s: `%s`" % (n, LABEL[e], err.replace("\n", " | ")))
        for n, e, rep in mismatches:
            a("- %s, %s: output differs from libtorch: `%s`" % (n, LABEL[e],
                                                                 rep.replace("\n", " | ")))
        a("")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(L))
    os.replace(path + ".tmp", path)


def rss_over_weights(rss_kb, base_kb, weight_bytes):
    if rss_kb is None or base_kb is None:
        return "n/a"
    return "%.2f" % ((rss_kb - base_kb) * 1024 / weight_bytes)


def yes_no(v):
    return "not checked" if v is None else ("yes" if v else "**no**")


def main():
    p = argparse.ArgumentParser(description="torchonnx vs torch.onnx 1.13, side by side")
    p.add_argument("--quick", action="store_true",
                   help="resnet50 and gpt_tiny, 1 run: a smoke check in a few minutes")
    p.add_argument("--models", help="comma-separated, from: " + ",".join(FULL_MODELS +
                                                                         ["gpt_tiny"]))
    p.add_argument("--runs", type=int, help="runs per exporter and model (default 3, quick 1)")
    p.add_argument("--module-runs", type=int, default=1,
                   help="runs of torch.onnx on the nn.Module (0: skip that column)")
    p.add_argument("--modern-runs", type=int, default=1,
                   help="runs of torch.onnx 2.6 in the Debian 13 root (0: skip that column)")
    p.add_argument("--memory-limit", type=int, default=1 << 30,
                   help="bytes: GPT models with more weight bytes are also exported once inside "
                        "a cgroup v1 memory limit of this size (0: skip)")
    p.add_argument("--ort-runs", type=int, default=20, help="ORT latency runs (median)")
    p.add_argument("--build-dir", default=os.environ.get("TORCHONNX_BUILD",
                                                         os.path.join(ROOT, "build")))
    p.add_argument("--models-dir", default=os.environ.get(
        "TORCHONNX_BENCH_MODELS", os.path.join(ROOT, "build", "bench_models")))
    p.add_argument("--work-dir", default=os.environ.get(
        "TORCHONNX_BENCH_WORK", os.path.join(ROOT, "build", "bench_work")))
    p.add_argument("--results-dir", default=HERE,
                   help="where RESULTS.md and results.json go (default bench/)")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per process")
    p.add_argument("--keep", action="store_true", help="keep the exported models")
    p.add_argument("--only-torchonnx", action="store_true",
                   help="skip torch.onnx (a check of torchonnx alone: most targets then read "
                        "'not measured')")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite RESULTS.md from the results.json of --results-dir, measuring "
                        "nothing")
    args = p.parse_args()
    if args.report_only:
        with open(os.path.join(args.results_dir, "results.json")) as f:
            write_markdown(os.path.join(args.results_dir, "RESULTS.md"), json.load(f))
        return 0
    if args.models:
        models = [m for m in args.models.split(",") if m]
    else:
        models = QUICK_MODELS if args.quick else FULL_MODELS
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    known = FULL_MODELS + ["gpt_tiny"]
    bad = [m for m in models if m not in known]
    if bad:
        p.error("unknown model(s) %s; known: %s" % (",".join(bad), ",".join(known)))

    start = time.monotonic()
    bench = Bench(args)
    bench.check_tools()
    os.makedirs(bench.work, exist_ok=True)
    machine = machine_info(bench)
    bench.make_models(models + ["baseline"])
    baseline = bench.baseline()
    log("baseline peak RSS: torchonnx %s KB, torch.onnx %s KB" % (
        baseline.get("torchonnx_rss_kb"), baseline.get("torch_onnx_rss_kb")))
    results = {}
    for name in models:
        r = bench.bench_model(name)
        r["summary"] = summarize(r)
        results[name] = r
    with open("/proc/loadavg") as f:
        loadavg_end = f.read().split()[:3]
    command = "bash bench/run.sh " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    report = {
        "command": command.strip(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "duration_seconds": time.monotonic() - start,
        "machine": machine,
        "loadavg_at_end": loadavg_end,
        "runs": args.runs,
        "module_runs": 0 if args.only_torchonnx else min(args.module_runs, args.runs),
        "modern_runs": 0 if args.only_torchonnx or not bench.debian13 else
        min(args.modern_runs, args.runs),
        "only_torchonnx": args.only_torchonnx,
        "quick": args.quick,
        "ort_runs": args.ort_runs,
        "cli_flags": bench.cli_flags,
        "baseline": baseline,
        "models": results,
    }
    report["targets"] = targets(results, baseline)
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, "results.json.tmp"), "w") as f:
        json.dump(report, f, indent=1)
    os.replace(os.path.join(args.results_dir, "results.json.tmp"),
               os.path.join(args.results_dir, "results.json"))
    write_markdown(os.path.join(args.results_dir, "RESULTS.md"), report)
    met = sum(1 for t in report["targets"] if t[3])
    log("%d of %d targets met; wrote %s" % (met, len(report["targets"]),
                                            os.path.join(args.results_dir, "RESULTS.md")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
