// model_file_test.cc — save/load round trip and refusal of corrupt or mismatched files.
#include "agent/model_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/agent/test_weights.h"

namespace rocemu::agent {
namespace {

class ModelFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "rocemu_model_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::vector<char> bytes() const {
    std::ifstream f(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  void write(const std::vector<char>& b) const {
    std::ofstream f(path_, std::ios::binary | std::ios::trunc);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  // The message of the ModelFileError load_model throws (fails the test if none).
  std::string load_error() const {
    try {
      load_model(path_);
    } catch (const ModelFileError& e) {
      return e.what();
    }
    ADD_FAILURE() << "load_model accepted the file";
    return {};
  }

  static Model graphcc() {
    Model m;
    m.mpnn = test::random_mpnn(21);
    return m;
  }
  std::string path_;
};

// Header offsets (model_file.h): magic 0, version 8, kind 12, dims 16..47, nets 48,
// hash 52, floats 60, checksum 68, payload 76.
constexpr size_t kVersionAt = 8, kHiddenDimAt = 20, kHashAt = 52, kPayloadAt = 76;

TEST_F(ModelFile, GraphCcRoundTripIsBitExact) {
  const Model m = graphcc();
  save_model(path_, m);
  const Model back = load_model(path_);
  EXPECT_EQ(back.kind, ModelKind::kGraphCc);
  EXPECT_TRUE(back == m);
}

TEST_F(ModelFile, AccRoundTripKeepsEveryPortsNetwork) {
  Model m;
  m.kind = ModelKind::kAccPerPort;
  m.acc = test::random_acc(3, 5);
  save_model(path_, m);
  const Model back = load_model(path_);
  EXPECT_EQ(back.kind, ModelKind::kAccPerPort);
  ASSERT_EQ(back.acc.size(), 5u);
  EXPECT_TRUE(back == m);
}

TEST_F(ModelFile, FlippedPayloadByteIsRefusedAsCorrupt) {
  save_model(path_, graphcc());
  auto b = bytes();
  b[kPayloadAt + 1000] ^= 0x10;
  write(b);
  const auto e = load_error();
  EXPECT_NE(e.find("checksum mismatch"), std::string::npos) << e;
  EXPECT_NE(e.find(path_), std::string::npos) << e;
}

TEST_F(ModelFile, TruncatedFileIsRefused) {
  save_model(path_, graphcc());
  auto b = bytes();
  b.resize(b.size() - 4);
  write(b);
  EXPECT_NE(load_error().find("truncated or padded"), std::string::npos);
  b.resize(30);
  write(b);
  EXPECT_NE(load_error().find("truncated"), std::string::npos);
}

TEST_F(ModelFile, OtherFilesAndVersionsAreRefused) {
  write(std::vector<char>(200, 'x'));
  EXPECT_NE(load_error().find("bad magic"), std::string::npos);
  save_model(path_, graphcc());
  auto b = bytes();
  b[kVersionAt] = 9;
  write(b);
  EXPECT_NE(load_error().find("format version 9, expected 1"), std::string::npos);
}

TEST_F(ModelFile, ModelOfOtherDimensionsOrActionTableIsRefused) {
  save_model(path_, graphcc());
  auto b = bytes();
  b[kHiddenDimAt] = 32;
  write(b);
  EXPECT_NE(load_error().find("dimension mismatch: hidden=32, this build expects 24"),
            std::string::npos);
  b = bytes();
  b[kHiddenDimAt] = 24;
  b[kHashAt] ^= 1;
  write(b);
  EXPECT_NE(load_error().find("different ECN action table"), std::string::npos);
}

TEST_F(ModelFile, MissingFileNamesThePath) {
  const auto e = load_error();
  EXPECT_NE(e.find(path_), std::string::npos);
  EXPECT_NE(e.find("cannot open"), std::string::npos);
}

// The checksum proves the bytes, not that they are weights: a model saved with NaN, Inf or
// absurd weights (a broken trainer) is refused, naming the weight.
TEST_F(ModelFile, NonFiniteOrAbsurdWeightsAreRefused) {
  for (float bad : {std::nanf(""), INFINITY, -INFINITY, 3e7f}) {
    Model m = graphcc();
    m.mpnn.ro2.w[5] = bad;
    save_model(path_, m);
    const auto e = load_error();
    EXPECT_NE(e.find("weight"), std::string::npos) << bad << ": " << e;
    EXPECT_TRUE(e.find("not finite") != std::string::npos ||
                e.find("implausible") != std::string::npos)
        << e;
  }
}

// Only regular files: /dev/zero (endless), a FIFO (would block), a directory.
TEST_F(ModelFile, DevicesFifosAndDirectoriesAreRefusedAtOnce) {
  for (const char* p : {"/dev/zero", "/dev/null", "/tmp"}) {
    try {
      load_model(p);
      ADD_FAILURE() << p << " accepted";
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  const std::string fifo = path_ + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    load_model(fifo);  // must not block waiting for a writer
    ADD_FAILURE() << "FIFO accepted";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos);
  }
  std::remove(fifo.c_str());
}

}  // namespace
}  // namespace rocemu::agent
