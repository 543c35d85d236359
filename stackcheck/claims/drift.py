"""What changed between two curriculum reports (the course gate's drift): claims whose status
changed, listings that broke or got fixed, versions that moved. A regression is a claim that was
verified and now fails, or a listing that passed and now fails."""

from __future__ import annotations

from stackcheck.claims.results import Report, Status


def _by(items, key: str) -> dict:
    return {item[key]: item for item in items or []}


def compare(old: Report, new: Report) -> dict:
    """What changed among what ran: a claim none of whose tests was selected this time (``-k``,
    ``-m``) is not compared, so it never reads "verified -> untested"."""
    old_claims = {c.id: c.status for c in old.claims}
    new_claims = {c.id: c.status for c in new.claims if c.tests}
    claims = [
        {"id": cid, "was": old_claims[cid].value, "now": new_claims[cid].value}
        for cid in sorted(set(old_claims) & set(new_claims))
        if old_claims[cid] != new_claims[cid]
    ]
    claims += [
        {"id": cid, "was": None, "now": new_claims[cid].value} for cid in sorted(set(new_claims) - set(old_claims))
    ]
    old_listings, new_listings = _by(old.listings, "id"), _by(new.listings, "id")
    listings = [
        {
            "id": lid,
            "was": old_listings[lid]["outcome"],
            "now": new_listings[lid]["outcome"],
            "first_error": new_listings[lid].get("first_error"),
        }
        for lid in sorted(set(old_listings) & set(new_listings))
        if old_listings[lid]["outcome"] != new_listings[lid]["outcome"]
    ]
    old_versions = old.environment.get("versions", {})
    new_versions = new.environment.get("versions", {})
    versions = [
        {"package": name, "was": old_versions.get(name), "now": new_versions.get(name)}
        for name in sorted(set(old_versions) | set(new_versions))
        if old_versions.get(name) != new_versions.get(name)
    ]
    regressions = [
        f"claim {c['id']} was verified, now {c['now']}"
        for c in claims
        if c["was"] == Status.VERIFIED and Status(c["now"]).failing
    ]
    regressions += [
        f"listing {item['id']} passed, now {item['now']}: {item['first_error']}"
        for item in listings
        if item["was"] == "passed" and item["now"] in ("failed", "interrupted")
    ]
    return {"claims": claims, "listings": listings, "versions": versions, "regressions": regressions}


def lines(drift: dict) -> list[str]:
    out = [f"  versions: {v['package']} {v['was']} -> {v['now']}" for v in drift["versions"]]
    out += [f"  claim {c['id']}: {c['was'] or 'new'} -> {c['now']}" for c in drift["claims"]]
    out += [f"  listing {item['id']}: {item['was']} -> {item['now']}" for item in drift["listings"]]
    return out or ["  nothing changed"]
