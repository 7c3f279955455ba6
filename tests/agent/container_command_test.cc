// The command lines that run a job in its container, and the CDI specs
// that say which GPUs a container can be given.
#include "agent/container_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/cdi_devices.h"
#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr const char* kGpu = "GPU-3e3f0c4c-9f0b-4d8e-8c1e-0a1b2c3d4e5f";

LaunchRequest ImageJob() {
  LaunchRequest req;
  req.id = 7;
  req.gpus = {core::GpuUuid(kGpu)};
  req.spec.command = {"python", "train.py"};
  req.spec.working_dir = "/work";
  req.spec.container = sched::ContainerSpec{"localhost/train:1", "", {{"/data", "/data", true}}};
  return req;
}

TEST(ContainerCommandTest, PodmanGetsTheGpuByItsCdiNameAndTheEnvironmentByName) {
  ContainerHost host;
  host.cdi_gpus = {"0", kGpu, "all"};
  host.program = "/usr/bin/podman";
  auto argv = ContainerArgv(ImageJob(), {"CUDA_VISIBLE_DEVICES", "GLEANER_JOB_ID"}, host, "n");
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_THAT(*argv, ElementsAreArray<std::string>({"/usr/bin/podman",
                                                    "run",
                                                    "--rm",
                                                    "--init",
                                                    "--name",
                                                    "n",
                                                    "--network",
                                                    "host",
                                                    "--userns",
                                                    "keep-id",
                                                    "--log-driver",
                                                    "none",
                                                    "--workdir",
                                                    "/work",
                                                    "--volume",
                                                    "/data:/data:ro",
                                                    "--env",
                                                    "CUDA_VISIBLE_DEVICES",
                                                    "--env",
                                                    "GLEANER_JOB_ID",
                                                    "--device",
                                                    std::string("nvidia.com/gpu=") + kGpu,
                                                    "localhost/train:1",
                                                    "python",
                                                    "train.py"}));
}

TEST(ContainerCommandTest, OnCgroupV2AlonePodmanLeavesTheJobsCgroupAlone) {
  ContainerHost host;
  host.simulated_gpus = true;
  host.unified_cgroups = true;
  auto argv = ContainerArgv(ImageJob(), {}, host, "n");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ::testing::Contains("--cgroups"));
  EXPECT_THAT(*argv, ::testing::Not(::testing::Contains("--device")));
}

TEST(ContainerCommandTest, ARealGpuWithoutACdiNameIsRefusedWithTheMend) {
  ContainerHost host;
  host.cdi_gpus = {"0", "all"};  // named by index only: its order may not be NVML's
  auto argv = ContainerArgv(ImageJob(), {}, host, "n");
  EXPECT_EQ(argv.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(argv.status().message(), HasSubstr(std::string("no CDI spec names GPU ") + kGpu));
  EXPECT_THAT(argv.status().message(), HasSubstr("nvidia-ctk cdi generate"));
}

TEST(ContainerCommandTest, ApptainerBindsTheMountsAndAddsTheDriverOnRealGpus) {
  LaunchRequest req = ImageJob();
  req.spec.container = sched::ContainerSpec{"", "/images/train.sif", {{"/data", "/d", false}}};
  ContainerHost host;
  host.program = "/usr/local/bin/apptainer";
  auto real = ContainerArgv(req, {"IGNORED"}, host, "n");
  ASSERT_TRUE(real.ok());
  EXPECT_THAT(*real, ElementsAre("/usr/local/bin/apptainer", "exec", "--nv", "--pwd", "/work",
                                 "--bind", "/data:/d", "/images/train.sif", "python", "train.py"));
  ContainerHost simulated;
  simulated.simulated_gpus = true;
  EXPECT_THAT(*ContainerArgv(req, {}, simulated, "n"), ::testing::Not(::testing::Contains("--nv")));
}

TEST(CdiDevicesTest, ReadsTheGpuNamesOfYamlAndJsonSpecsAndNothingElse) {
  testing::TempDir dir;
  // As nvidia-ctk writes it: devices first, the kind at the end.
  dir.Write("nvidia.yaml", std::string(R"(---
cdiVersion: 0.5.0
containerEdits:
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: )") + kGpu + R"(
- name: all
kind: nvidia.com/gpu
)");
  dir.Write("other.yaml", "kind: vendor.com/fpga\ndevices:\n- name: fpga0\n");
  dir.Write("extra.json",
            R"({"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[{"name":"GPU-j"}]})");
  dir.Write("broken.json", "{not json");
  dir.Write("notes.txt", "kind: nvidia.com/gpu\n- name: GPU-txt\n");
  EXPECT_THAT(CdiGpuDevices({dir.path().string(), "/nonexistent/cdi"}),
              ElementsAre("0", kGpu, "GPU-j", "all"));
}

}  // namespace
}  // namespace gleaner::agent
