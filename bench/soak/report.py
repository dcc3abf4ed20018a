"""The soak's printout: load achieved, kills, releases, errors, latency windows, memory, CPU,
and the ``target:`` lines of issue 38 (bench/README.md, "Soak", says what each means)."""

from __future__ import annotations

from load import EXPECTED, ON_PURPOSE, role_of

SERVICE_ROLES = ("ingest", "indexer", "scan", "notify", "api", "telemetry")
RELEASE_ROLES = ("ingest", "indexer", "scan", "api")  # the "end to end" roles


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def print_all(*, args, rec, load, outages, rss_first, rss_end, pids_first, pids_end, checks, cpu_run,
              indexed_in_run, cpu_quiet, cpu_quiet_raw, idle_rate, quiet_indexed, quiet_sent, phase_s,
              mods_now, load_avg, run_s, peak) -> None:
    print()
    print(f"== soak: {args.minutes:g} min of load, load average {load_avg[0][0]:.2f} at the start, "
          f"{load_avg[1][0]:.2f} at the end (1-min; 5-min {load_avg[1][1]:.2f})")

    # ---- the load -----------------------------------------------------------------------------
    routes = sorted({route for route, _ in rec.statuses})
    total = {route: sum(n for (r, _), n in rec.statuses.items() if r == route) for route in routes}
    asked = {"webhook": args.webhooks, "api": args.api, "telemetry": args.pings}
    sent = {"webhook": sum(v for r, v in total.items() if r.startswith("webhook")),
            "api": sum(v for r, v in total.items() if r.startswith("api")),
            "telemetry": sum(v for r, v in total.items() if r.startswith("telemetry"))}
    print("load (asked / achieved per second over the run; skipped = ticks that found every slot busy):")
    for name in ("webhook", "api", "telemetry"):
        print(f"  {name:10s} {asked[name]:8.1f} / {sent[name] / run_s:8.1f}   skipped {rec.skipped.get(name, 0)}")
    for name, n in rec.skipped.items():
        if name not in asked:
            print(f"  {name}: {n}")

    print(f"kill -9: {len(outages)}" + "".join(
        f"\n  {role:10s} down {back - killed:5.1f} s (until its restarted process answered /readyz)"
        for role, killed, back in outages))

    # ---- releases -----------------------------------------------------------------------------
    lost = checks["lost"]
    queued_extra = max(0, checks["queued"] - len(load.sent))
    duplicated = checks["versions_twice"] + checks["files_twice"] + queued_extra
    redelivered = {s: n for (r, s), n in rec.statuses.items() if r == "webhook redelivered"}
    print("releases (the run and the quiet CPU phase together):")
    print(f"  sent {len(load.sent)}, accepted (202) {checks['accepted']}, redelivered on purpose "
          f"{sum(redelivered.values())} (answers {dict(sorted(redelivered.items(), key=str))})")
    print(f"  indexed (a mod_versions row for the release) {checks['versions']}, lost {len(lost)}, "
          f"duplicated {duplicated}")
    print(f"    lost = accepted, yet no mod_versions row for its GitHub release id after the drain")
    print(f"    duplicated = releases with more than one mod_versions row ({checks['versions_twice']}) + "
          f"assets with more than one version_files row ({checks['files_twice']}) + deliveries stored "
          f"on INGEST more than once ({queued_extra}: {checks['queued']} messages for {len(load.sent)} "
          f"distinct delivery ids sent)")
    print(f"  versions by status {checks['statuses']}; webhook_deliveries outcomes {checks['outcomes']}; "
          f"dead letters {checks['dead_letters']}; files {checks['files']}")
    print(f"  version.indexed events {checks['indexed_events']} for {checks['versions']} versions "
          f"(a job redelivered after a kill publishes again; consumers are idempotent; not counted as duplicated)")
    for r in lost[:20]:
        print(f"  LOST release {r.release_id} ({r.tag}, repo {r.repo_id}) delivery {r.delivery_id}, "
              f"attempts {r.attempts}, ingest said {r.status[:120]}")

    # ---- errors -------------------------------------------------------------------------------
    def in_outage(t: float, route: str) -> bool:
        return any(role == role_of(route) and killed <= t <= back + 2.0 for role, killed, back in outages)

    outage_errors = {route: 0 for route in routes}
    other_errors = {route: 0 for route in routes}
    other_kinds: dict[tuple, int] = {}
    for t, route, status in rec.failures:
        if in_outage(t, route):
            outage_errors[route] += 1
        else:
            other_errors[route] += 1
            other_kinds[(route, status)] = other_kinds.get((route, status), 0) + 1
    print("answers per route (on purpose: 429 to a second ping from one server; kill outage: a failure "
          "from the killed role while it was down):")
    print(f"  {'route':22s} {'requests':>9s} {'expected':>9s} {'on purpose':>10s} {'kill outage':>11s} "
          f"{'other errors':>12s} {'error rate':>10s}")
    all_requests = sum(total.values())
    for route in routes:
        ok = sum(n for (r, s), n in rec.statuses.items() if r == route and s in EXPECTED[route])
        purpose = sum(n for (r, s), n in rec.statuses.items() if r == route and s in ON_PURPOSE.get(route, ()))
        print(f"  {route:22s} {total[route]:9d} {ok:9d} {purpose:10d} {outage_errors[route]:11d} "
              f"{other_errors[route]:12d} {100 * other_errors[route] / max(1, total[route]):9.3f}%")
    if other_kinds:
        print("  other errors by answer: " + ", ".join(f"{r} {s}: {n}" for (r, s), n in sorted(other_kinds.items(),
                                                                                              key=str)))
    error_rate = 100 * sum(other_errors.values()) / max(1, all_requests)
    with_outages = 100 * (sum(other_errors.values()) + sum(outage_errors.values())) / max(1, all_requests)

    # ---- latency windows ----------------------------------------------------------------------
    windows = 6
    print(f"latency p50 / p95 ms per route, {windows} windows of {run_s / windows / 60:.1f} min "
          f"(expected answers only):")
    print(f"  {'route':22s} " + " ".join(f"{'w' + str(w + 1):>13s}" for w in range(windows)) + "   last/first p95")
    ratios = {}
    for route in routes:
        cells, p95s = [], []
        for w in range(windows):
            values = rec.latencies.get((route, w), [])
            p95s.append(pct(values, 95))
            cells.append(f"{pct(values, 50):6.1f}/{pct(values, 95):6.1f}" if values else f"{'-':>13s}")
        # A ratio of two p95s needs enough answers in both windows to mean anything.
        if min(len(rec.latencies.get((route, 0), [])), len(rec.latencies.get((route, windows - 1), []))) >= 50:
            ratios[route] = p95s[-1] / p95s[0]
        print(f"  {route:22s} " + " ".join(cells) +
              (f"   {ratios[route]:.2f}x" if route in ratios else ""))

    # ---- memory -------------------------------------------------------------------------------
    print("memory per role (RSS MB, PostgreSQL's shared memory counted once for all its processes; PSS "
          "divides each shared page among its processes) at 1/6 of the run and after the mixed load:")
    first_total = end_total = 0.0
    for role in sorted(set(rss_first) | set(rss_end)):
        a, b = rss_first.get(role, (0.0, 0.0, 0.0)), rss_end.get(role, (0.0, 0.0, 0.0))
        first_total += a[0]
        end_total += b[0]
        restarted = role in SERVICE_ROLES and pids_first.get(role) != pids_end.get(role)
        n = len(pids_end.get(role, []))
        print(f"  {role:10s} {a[0]:7.1f} -> {b[0]:7.1f}  ({(b[0] - a[0]) / max(a[0], 1e-9) * 100:+6.1f} %)  "
              f"PSS {a[1]:7.1f} -> {b[1]:7.1f}" + (f"  [{n} processes]" if n > 1 else "")
              + ("  [restarted by a kill between the samples]" if restarted else ""))
    pss_end = sum(m[1] for m in rss_end.values())
    naive_end = sum(m[2] for m in rss_end.values())
    growth = (end_total - first_total) / max(first_total, 1e-9) * 100
    print(f"  {'all':10s} {first_total:7.1f} -> {end_total:7.1f}  ({growth:+6.1f} %)  PSS after the load {pss_end:.1f}; "
          f"every process's RSS summed as is (PostgreSQL's shared buffers once per backend) {naive_end:.1f}")

    # ---- CPU ----------------------------------------------------------------------------------
    print(f"CPU per indexed release, quiet phase: {quiet_indexed} of {quiet_sent} releases in {phase_s:.1f} s, "
          f"nothing else sent; each process's idle CPU (measured 5 s before) subtracted:")
    per = {role: cpu_quiet.get(role, 0.0) / max(1, quiet_indexed) * 1000 for role in cpu_quiet}
    e2e = sum(per.get(role, 0.0) for role in RELEASE_ROLES)
    for role in sorted(per, key=lambda r: -per[r]):
        share = f"{per[role] / e2e * 100:5.1f} % of end to end" if role in RELEASE_ROLES and e2e else ""
        print(f"  {role:10s} {per[role]:8.2f} ms  (raw {cpu_quiet_raw.get(role, 0.0) / max(1, quiet_indexed) * 1000:7.2f},"
              f" idle {idle_rate.get(role, 0.0) * 1000:5.1f} ms/s)  {share}")
    print(f"  end to end (ingest + indexer + scan + api invalidation) {e2e:.2f} ms; with NATS, PostgreSQL and "
          f"notify {e2e + sum(per.get(r, 0.0) for r in ('nats', 'postgres', 'notify')):.2f} ms")
    if indexed_in_run:
        print(f"  over the loaded run ({indexed_in_run} releases indexed; these roles do only release work): " +
              ", ".join(f"{role} {cpu_run.get(role, 0.0) / indexed_in_run * 1000:.2f} ms"
                        for role in ("ingest", "indexer", "scan")))

    # ---- targets ------------------------------------------------------------------------------
    worst = max(ratios.items(), key=lambda kv: kv[1]) if ratios else ("-", float("nan"))
    print()
    print(f"target: soak lost = {len(lost)}")
    print(f"target: soak duplicated = {duplicated}")
    print(f"target: soak rss growth = {growth:.1f} % (goal <= 10 %)")
    print(f"target: soak error rate = {error_rate:.3f} % (goal <= 0.1 %)")
    print(f"  (with the failures during the kills' outages: {with_outages:.3f} %)")
    if ratios:
        print(f"target: soak last window p95 = {worst[1]:.2f} x the first (goal <= 1.5 x)  (worst route: {worst[0]})")
    else:
        print("target: soak last window p95 = - x the first (goal <= 1.5 x)  (fewer than 50 answers a window "
              "on every route: run longer or faster)")
    print(f"target: whole stack rss at {mods_now} mods = {peak[0]:.0f} MB (goal <= 1536 MB)  (the highest 10-s sample "
          f"from 1/6 of the run on, at {peak[1]:.0f} s; after the load {end_total:.0f} MB, PSS {pss_end:.0f} MB, "
          f"naive RSS sum {naive_end:.0f} MB)")
    if peak[2]:  # what the highest sample held (a snapshot write, an API loading its index)
        print("  at the highest sample: " + ", ".join(f"{role} {mb:.0f}" for role, mb in
                                                      sorted(peak[2].items(), key=lambda kv: -kv[1])) + " MB")
    print(f"target: cpu per indexed release = {e2e:.2f} ms (goal printed)")
    for role in RELEASE_ROLES:
        label = "api invalidation" if role == "api" else role
        print(f"target: cpu per indexed release, {label} = {per.get(role, 0.0):.2f} ms "
              f"(goal printed: {per.get(role, 0.0) / e2e * 100 if e2e else 0:.0f} % of it)")
