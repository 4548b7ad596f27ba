"""Print a result.json as a short table: clusters with their members, then pages in no cluster."""

import json
import sys


def main(path: str) -> int:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    rows = {r["id"]: r for r in data["urls"]}
    print(f"{data['meta']['total_urls']} URLs, {data['meta']['eligible_html_urls']} eligible for content "
          f"clustering, {data['meta']['total_clusters']} clusters\n")
    for c in data["clusters"]:
        print(f"{c['cluster_id']}  ({c['kind']})")
        for mid in c["member_ids"]:
            r = rows[mid]
            mark = "*" if r["is_canonical"] else " "
            print(f"   {mark} {r['id']:>3} {r['status_code'] or '-':>3} {r['match_rule']:<9} {r['url']}")
    alone = [r for r in data["urls"] if not r["cluster_id"]]
    print("\nin no cluster:")
    for r in alone:
        extra = r["error"] or r["page_type"]
        print(f"     {r['id']:>3} {r['status_code'] or '-':>3} {r['url']}  ({extra})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
