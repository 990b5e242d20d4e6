#!/usr/bin/python3
"""Checks that #includes between the top-level folders point down the layers of
docs/architecture.md ("Layering"), and that every listed exception still exists.

    scripts/check_layering.py [SOURCE_ROOT]

Exit 0 when every include of models/, platform/ and sw/ agrees with the layers; else each
offending include is printed as FILE:LINE: ... and the exit status is 1.
"""

import os
import re
import sys

# Lower number = lower layer. A file may include its own layer and those below it.
LAYERS = [
    ("sw/include/", 0, "interface"),
    ("platform/config/", 1, "infrastructure"),
    ("platform/stats/", 1, "infrastructure"),
    ("platform/parallel/", 1, "infrastructure"),
    ("models/tlm/", 2, "conventions"),
    ("models/", 3, "models"),
    ("platform/elastic_trace/", 3, "models"),  # the trace format the trace injectors read
    ("platform/", 4, "assembly"),
    ("sw/", None, "host software"),  # the host side: includes only sw/
]

# Known upward includes, each with the reason docs/architecture.md gives. An entry that no
# longer matches any include is an error too, so this list stays the current truth.
EXCEPTIONS = {
    ("models/gpu/gpu_timing/gpu_timing.h", "platform/clock_domains.h"):
        "the GPU's top level is built from the platform's clock domains",
    ("models/gpu/gpu_timing/gpu_timing.h", "platform/platform_params.h"):
        "the GPU's top level is built from the whole platform's parameters",
    ("models/gpu/command_processor/command_processor.h", "platform/platform_params.h"):
        "the command processor builds the GPU's top level from the platform's parameters",
    ("models/gpu/command_processor/command_processor.cpp", "platform/clock_domains.h"):
        "the command processor builds the GPU's top level from the platform's clock domains",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CHECKED = ("models/", "platform/", "sw/")
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc")


def layer_of(path):
    for prefix, layer, name in LAYERS:
        if path.startswith(prefix):
            return layer, name
    return None, None


def resolve(include, including_file, root):
    """The include as a path from the root: "models/..." as written; "gpuvp/x.h" from sw/include;
    a bare name relative to the including file's folder."""
    if include.startswith(CHECKED):
        return include
    if include.startswith("gpuvp/"):
        return "sw/include/" + include
    local = os.path.normpath(os.path.join(os.path.dirname(including_file), include))
    if os.path.exists(os.path.join(root, local)):
        return local
    return None  # a system or third-party header


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    violations = []
    used_exceptions = set()
    for top in CHECKED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                own_layer, own_name = layer_of(path)
                with open(os.path.join(root, path), errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = resolve(m.group(1), path, root)
                        if target is None:
                            continue
                        target_layer, target_name = layer_of(target)
                        if own_layer is None:  # host software: sw/ only
                            allowed = target.startswith("sw/")
                        elif target_layer is None:  # host software from the platform side
                            allowed = own_name == "assembly"
                        else:
                            allowed = target_layer <= own_layer
                        if allowed:
                            continue
                        if (path, target) in EXCEPTIONS:
                            used_exceptions.add((path, target))
                            continue
                        violations.append("%s:%d: %s (%s) includes %s (%s): an include against the layers of "
                                          "docs/architecture.md" % (path, number, path, own_name, target, target_name))
    for key in sorted(set(EXCEPTIONS) - used_exceptions):
        violations.append("scripts/check_layering.py: the listed exception %s -> %s no longer occurs: remove it "
                          "(and from docs/architecture.md)" % key)
    for v in violations:
        print(v)
    if not violations:
        print("layering: every include of models/, platform/ and sw/ points down the layers (%d listed exceptions)"
              % len(EXCEPTIONS))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
