"""Where a cold numba compile spends its time: per kernel and per compiler pass.

Runs ``orca-env warmup`` (all families, or ``--family``) in this process with a fresh, empty
``NUMBA_CACHE_DIR`` and numba's event API listening: every ``numba:compile`` (one kernel's
compile, callees nested inside) and ``numba:run_pass`` (a compiler pass of one function). It
prints the kernels by exclusive CPU time (their own passes, not their callees'), split into
type inference, lowering (numba IR to LLVM IR), LLVM (function and module passes, machine code)
and the rest, then the passes summed over kernels, the time ``cache=True`` spends saving, the
LLVM work done for callees that their callers redo (numba links a callee's optimised module
into each caller and optimises and compiles it again there) and the Python wrappers' lowering
(every kernel gets one, called from Python or not). Timings are CPU seconds of this process;
on a loaded machine they grow, so compare two versions in runs side by side.

    python benchmarks/profile_compile.py [--family env] [--top 30] [--callers]
        [--detail orca_env.stages.run_worlds]

Run it against another checkout with ``PYTHONPATH=/that/checkout``.
"""

import argparse
import collections
import os
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", help="a family (default: all)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--callers", action="store_true", help="print who compiled each kernel")
    ap.add_argument("--detail", action="append", default=[],
                    help="a kernel (module.qualname) whose time to print pass by pass")
    args = ap.parse_args()
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="profile_compile_")
    import numba.core.caching as caching
    import numba.core.event as ev

    clock = time.process_time
    own = collections.defaultdict(lambda: collections.Counter())  # kernel -> pass -> CPU-s
    passes = collections.Counter()
    count = collections.Counter()
    stack = []  # [name, start, child time, kind]
    nested = set()  # kernels compiled for a caller (inside another kernel's compile)
    callers = collections.defaultdict(set)

    class Compiles(ev.Listener):
        def on_start(self, event):
            d = event.data["dispatcher"]
            f = d.py_func
            name = f"{f.__module__}.{f.__qualname__}"
            caller = next((x[0] for x in reversed(stack) if x[3] == "compile"), None)
            if caller is not None:
                nested.add(name)
            callers[name].add(caller)
            stack.append([name, clock(), 0.0, "compile"])

        def on_end(self, event):
            name, t0, child, _ = stack.pop()
            dt = clock() - t0
            own[name]["(outside passes)"] += dt - child
            count[name] += 1
            if stack:
                stack[-1][2] += dt

    class Passes(ev.Listener):
        def on_start(self, event):
            stack.append([event.data["qualname"], clock(), 0.0,
                          event.data["name"].split(" [")[0]])

        def on_end(self, event):
            qual, t0, child, pname = stack.pop()
            dt = clock() - t0
            # the enclosing compile's kernel owns the pass
            kern = next((s[0] for s in reversed(stack) if s[3] == "compile"), qual)
            own[kern][pname] += dt - child
            passes[pname] += dt - child
            if stack:
                stack[-1][2] += dt

    saving = [0.0]
    orig_save = caching.Cache.save_overload

    def save_overload(self, sig, data):
        t0 = clock()
        try:
            return orig_save(self, sig, data)
        finally:
            saving[0] += clock() - t0
            if stack:
                stack[-1][2] += clock() - t0

    caching.Cache.save_overload = save_overload

    # LLVM's share of the lowering pass: function passes, module passes (the whole module with
    # the callees linked in), machine code; the kernel being compiled owns them.
    import numba.core.codegen as codegen

    def timed(cls, meth, label):
        orig = getattr(cls, meth)

        def wrapper(self, *a, **k):
            t0 = clock()
            try:
                return orig(self, *a, **k)
            finally:
                dt = clock() - t0
                kern = next((s[0] for s in reversed(stack) if s[3] == "compile"), "?")
                own[kern][label] += dt
                passes[label] += dt
                if stack:
                    stack[-1][2] += dt
        setattr(cls, meth, wrapper)

    import numba.core.lowering as lowering

    timed(lowering.Lower, "create_cpython_wrapper", "lower: python wrapper")
    timed(lowering.Lower, "create_cfunc_wrapper", "lower: cfunc wrapper")

    def optimize_functions(self, ll_module):  # numba's, timed by function (wrappers apart)
        ll_module.data_layout = self._codegen._data_layout
        for func in ll_module.functions:
            fpm, pb = self._codegen._function_pass_manager()
            t0 = clock()
            fpm.run(func, pb)
            dt = clock() - t0
            label = "llvm function passes" + (": wrappers" if func.name.startswith(
                ("cpython.", "cfunc.")) else "")
            kern = next((s[0] for s in reversed(stack) if s[3] == "compile"), "?")
            own[kern][label] += dt
            passes[label] += dt
            if stack:
                stack[-1][2] += dt

    codegen.CPUCodeLibrary._optimize_functions = optimize_functions
    timed(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm module passes")
    timed(codegen.JITCodeLibrary, "_finalize_specific", "llvm machine code")
    ev.register("numba:compile", Compiles())
    ev.register("numba:run_pass", Passes())
    from orca_env.warmup import FAMILY_MODULES, warmup

    t0, c0 = time.perf_counter(), clock()
    warmup(args.family or tuple(FAMILY_MODULES), quiet=True, stream=sys.stderr)
    wall, cpu = time.perf_counter() - t0, clock() - c0
    rows = []
    for name, c in own.items():
        tot = sum(c.values())
        ti = c["nopython_type_inference"] + c["partial_type_inference"]
        lo = c["native_lowering"] + c["native_parfor_lowering"] + c["lower: python wrapper"] + \
            c["lower: cfunc wrapper"]
        llvm = c["llvm function passes"] + c["llvm function passes: wrappers"] + \
            c["llvm module passes"] + c["llvm machine code"]
        rows.append((tot, name, ti, lo, llvm, tot - ti - lo - llvm, count[name]))
    rows.sort(reverse=True)
    print(f"warmup {args.family or 'all'}: {wall:.1f} s wall, {cpu:.1f} CPU-s; "
          f"cache saves {saving[0]:.1f} CPU-s; 1-min load {os.getloadavg()[0]:.2f}")
    print(f"{'kernel (exclusive CPU-s)':<62}{'total':>7}{'typeinf':>8}{'lower':>7}{'llvm':>7}"
          f"{'other':>7}{'n':>4}")
    for tot, name, ti, lo, llvm, other, n in rows[:args.top]:
        print(f"{name[-62:]:<62}{tot:7.2f}{ti:8.2f}{lo:7.2f}{llvm:7.2f}{other:7.2f}{n:4d}")
    print(f"sum over kernels: {sum(r[0] for r in rows):.1f} CPU-s, {sum(count.values())} "
          f"compiles of {len(rows)} functions")
    def late_llvm(names):
        return sum(own[n]["llvm module passes"] + own[n]["llvm machine code"] for n in names)
    print(f"callees' own module passes + machine code (redone in their callers): "
          f"{late_llvm(nested):.1f} CPU-s; top-level kernels' "
          f"{late_llvm(set(own) - nested):.1f}")
    wrap = sorted(((c["lower: python wrapper"], n) for n, c in own.items()), reverse=True)
    print("python wrappers' lowering, CPU-s:", ", ".join(f"{n.removeprefix('orca_env.')} {t:.2f}"
                                                      for t, n in wrap[:25]))
    for name in args.detail:
        print(f"{name}:", ", ".join(f"{k} {v:.2f}" for k, v in own[name].most_common()))
    if args.callers:
        for name in sorted(callers):
            print(f"  {name} <- {sorted(str(c).removeprefix('orca_env.') for c in callers[name])}")
    print("passes (exclusive CPU-s):")
    for pname, t in passes.most_common(15):
        print(f"  {pname:<40}{t:7.2f}")


if __name__ == "__main__":
    main()
