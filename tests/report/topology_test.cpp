// `gpuvp topology`: the diagram is drawn from the elaborated model, so its blocks follow the
// configuration: as many SMs, L1 TLBs and L2 slices as configured, every block of
// docs/architecture.md present, and every SM and slice bound into the memory path.
#include <map>
#include <string>

#include "tests/report/common.h"

namespace gpuvp::test {
namespace {

using std::chrono::seconds;

std::string short_kind(const std::string& kind) {
  const size_t colon = kind.rfind("::");
  return colon == std::string::npos ? kind : kind.substr(colon + 2);
}

struct Counted {
  std::map<std::string, int> kinds;
  nlohmann::json j;
};

Counted topology(const std::vector<std::string>& sets) {
  std::vector<std::string> argv = {kGpuvp, "topology", "--format", "json"};
  for (const std::string& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  const ProcessResult r = run(argv, seconds(300));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  Counted c;
  if (r.exit_code != 0) return c;
  c.j = nlohmann::json::parse(r.out);
  for (const auto& m : c.j["modules"]) ++c.kinds[short_kind(m["kind"].get<std::string>())];
  return c;
}

int bindings_between(const nlohmann::json& j, const std::string& initiator_part, const std::string& target_part) {
  int n = 0;
  for (const auto& b : j["bindings"]) {
    if (b["initiator"].get<std::string>().find(initiator_part) != std::string::npos &&
        b["target"].get<std::string>().find(target_part) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

TEST(Topology, BlocksFollowTheConfiguration) {
  for (const auto& [sms, slices] : {std::pair<int, int>{84, 32}, std::pair<int, int>{6, 4}}) {
    SCOPED_TRACE(std::to_string(sms) + " SMs, " + std::to_string(slices) + " L2 slices");
    const Counted c = topology({"gpu.sm.count=" + std::to_string(sms), "memory.l2.slices=" + std::to_string(slices)});
    ASSERT_FALSE(c.j.is_null());
    EXPECT_EQ(c.j["sm_count"], sms);
    EXPECT_EQ(c.kinds.count("Sm") ? c.kinds.at("Sm") : 0, sms);
    EXPECT_EQ(c.kinds.count("L1Tlb") ? c.kinds.at("L1Tlb") : 0, sms);
    EXPECT_EQ(c.kinds.count("L2Slice") ? c.kinds.at("L2Slice") : 0, slices);
    // Every block of the architecture diagram, by its class.
    for (const char* block : {"Bridge", "PcieLink", "CommandProcessor", "CopyEngine", "CtaScheduler", "SmCluster",
                              "Crossbar", "HbmController", "Gmmu", "GpuTiming"}) {
      EXPECT_GE(c.kinds.count(block) ? c.kinds.at(block) : 0, 1) << block;
    }
    // The memory path is wired: every slice is bound from the crossbar and to the HBM controller.
    EXPECT_EQ(bindings_between(c.j, "crossbar", "l2"), slices);
    int to_hbm = 0;
    for (const auto& b : c.j["bindings"]) {
      if (b["target"].get<std::string>().find("hbm") != std::string::npos) ++to_hbm;
    }
    EXPECT_EQ(to_hbm, slices);
    for (const auto& b : c.j["bindings"]) EXPECT_NE(b["target"], "(unbound)") << b["initiator"];
  }
}

TEST(Topology, ModulesCarryTheirConfiguredClockDomain) {
  const Counted c = topology({"gpu.sm.count=4", "gpu.sm.clock=1000 MHz", "memory.l2.clock=1500 MHz"});
  ASSERT_FALSE(c.j.is_null());
  int sms = 0, slices = 0;
  for (const auto& m : c.j["modules"]) {
    const std::string kind = short_kind(m["kind"].get<std::string>());
    if (kind == "Sm") {
      ++sms;
      EXPECT_EQ(m["clock"]["knob"], "gpu.sm.clock");
      EXPECT_DOUBLE_EQ(m["clock"]["hz"].get<double>(), 1e9);
    } else if (kind == "L2Slice") {
      ++slices;
      EXPECT_EQ(m["clock"]["knob"], "memory.l2.clock");
      EXPECT_DOUBLE_EQ(m["clock"]["hz"].get<double>(), 1.5e9);
    } else if (kind == "Bridge") {
      EXPECT_FALSE(m.contains("clock")) << "the bridge is event-driven";
    }
  }
  EXPECT_EQ(sms, 4);
  EXPECT_GT(slices, 0);
}

TEST(Topology, DrawsSvgWithGraphviz) {
  const std::string svg = ::testing::TempDir() + "/topology.svg";
  const ProcessResult r = run({kGpuvp, "topology", "--set", "gpu.sm.count=4", "-o", svg}, seconds(300));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string text = slurp(svg);
  ASSERT_NE(text.find("<svg"), std::string::npos) << text.substr(0, 500);
  for (const char* name : {"command_processor", "crossbar", "hbm", "gmmu", "bridge", "pcie"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
  const ProcessResult dot = run({kGpuvp, "topology", "--set", "gpu.sm.count=4"}, seconds(300));
  ASSERT_EQ(dot.exit_code, 0) << describe(dot);
  EXPECT_EQ(dot.out.rfind("digraph gpuvp {", 0), 0u) << dot.out.substr(0, 200);
  EXPECT_NE(dot.out.find("->"), std::string::npos);
}

// docs/architecture.md shows docs/topology.svg: it must still be the picture of the model.
TEST(Topology, TheDocumentedDiagramMatchesTheModel) {
  const Counted c = topology({"gpu.sm.count=8", "memory.l2.slices=8"});
  ASSERT_FALSE(c.j.is_null());
  const std::string svg = slurp(std::string(GPUVP_SOURCE_DIR) + "/docs/topology.svg");
  ASSERT_FALSE(svg.empty()) << "docs/topology.svg is missing";
  size_t titles = 0;
  for (size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1)) ++titles;
  for (const auto& m : c.j["modules"]) {
    const std::string name = m["name"].get<std::string>();
    EXPECT_NE(svg.find("<title>" + name + "</title>"), std::string::npos)
        << name << " is not in docs/topology.svg: regenerate it (the command is in docs/architecture.md)";
  }
  // Nodes (one per module, with the graph's, the clusters' and the legend's titles) and one title
  // per arrow.
  auto count = [&](const std::string& prefix) {
    size_t n = 0;
    for (size_t at = svg.find(prefix); at != std::string::npos; at = svg.find(prefix, at + 1)) ++n;
    return n;
  };
  const size_t clusters = count("<title>cluster_");
  const size_t legend = count("<title>legend ");
  EXPECT_EQ(legend, 5u);
  EXPECT_EQ(titles, 1 + clusters + legend + c.j["modules"].size() + c.j["bindings"].size())
      << "docs/topology.svg has other blocks or arrows than the model: regenerate it";
}

TEST(Topology, ABadConfigurationIsAnError) {
  const ProcessResult r = run({kGpuvp, "topology", "--set", "gpu.sm.cout=4"}, seconds(60));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("gpu.sm.cout"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace gpuvp::test
