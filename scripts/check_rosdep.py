"""Check the rosdep keys of both package.xml files against a ros/rosdistro checkout and write rosdep/checked.yaml:
each key, and the file of that snapshot (or this repository's rosdep/llm_planner_ros.yaml) that
resolves it for Ubuntu. A key nothing resolves is an error.

    python scripts/check_rosdep.py /path/to/rosdistro [--distro kilted]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "rosdep" / "llm_planner_ros.yaml"
OWN = {"llm_planner_msgs"}   # this repository's interface package


PACKAGES = (ROOT / "llm_planner_ros" / "package.xml", ROOT / "llm_planner_msgs" / "package.xml")


def declared() -> list[str]:
    """The rosdep keys of both packages (the interfaces' and the Python package's)."""
    return sorted({e.text.strip() for path in PACKAGES for e in ET.parse(path).getroot()
                   if e.tag.endswith("depend") and e.text})


def for_ubuntu(rule: object) -> bool:
    return isinstance(rule, dict) and any(k in rule for k in ("ubuntu", "*"))


def resolve(rosdistro: Path, distro: str) -> dict[str, str]:
    rules = {name: yaml.safe_load((rosdistro / "rosdep" / name).read_text()) for name in ("base.yaml", "python.yaml")}
    packages = set()
    for repo, entry in yaml.safe_load((rosdistro / distro / "distribution.yaml").read_text())["repositories"].items():
        release = entry.get("release")
        if release:
            packages.update(release.get("packages", [repo]))
    shipped = yaml.safe_load(SHIPPED.read_text())
    out = {}
    for key in declared():
        where = ("this repository's interface package" if key in OWN else
                 f"{distro}/distribution.yaml" if key in packages else
                 next((f"rosdep/{n}" for n, r in rules.items() if for_ubuntu(r.get(key))), None) or
                 ("rosdep/llm_planner_ros.yaml (shipped here)" if key in shipped else None))
        if where is None:
            raise SystemExit(f"no rule resolves {key!r}: add one to {SHIPPED.relative_to(ROOT)}")
        if key in shipped and not where.endswith("(shipped here)"):
            raise SystemExit(f"{key!r} is resolved by {where}: drop it from {SHIPPED.relative_to(ROOT)}")
        out[key] = where
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rosdistro", type=Path)
    p.add_argument("--distro", default="kilted")
    args = p.parse_args()
    commit = subprocess.run(["git", "-C", str(args.rosdistro), "log", "-1", "--format=%H %cs"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    resolved = resolve(args.rosdistro, args.distro)
    (ROOT / "rosdep" / "checked.yaml").write_text(
        "# Written by scripts/check_rosdep.py: each rosdep key of package.xml and what resolves it (Ubuntu)\n"
        + yaml.safe_dump({"rosdistro": f"ros/rosdistro {commit}", "distro": args.distro, "keys": resolved},
                         sort_keys=False, width=120))
    print(f"{len(resolved)} keys resolve against ros/rosdistro {commit} ({args.distro})")
    for key, where in resolved.items():
        print(f"  {key:40s} {where}")


if __name__ == "__main__":
    sys.exit(main())
