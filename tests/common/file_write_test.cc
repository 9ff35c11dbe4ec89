// The check before an output file is written beside its place and renamed into it
// (common/file_write.h): an existing path that is not a regular file is never replaced, and
// with probe_dir a missing directory is created and one that cannot be is named.
#include "common/file_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rocemu {
namespace {

TEST(OutputFile, WhatARenameWouldReplaceOrCannotReachIsNamed) {
  namespace fs = std::filesystem;
  const std::string dir = testing::TempDir() + "output_file_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string kNotRegular = "exists and is not a regular file (writing would replace it)";
  // Not regular: a device, a directory, a FIFO; with or without the probe.
  for (const bool probe : {false, true}) {
    EXPECT_EQ(output_file_problem("/dev/null", probe), kNotRegular);
    EXPECT_EQ(output_file_problem(dir, probe), kNotRegular);
  }
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_EQ(output_file_problem(dir + "/fifo", false), kNotRegular);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // A regular file or a new name: fine; a missing directory is created with the probe only.
  std::ofstream(dir + "/old.model") << "x";
  EXPECT_EQ(output_file_problem(dir + "/old.model", true), "");
  EXPECT_EQ(output_file_problem(dir + "/new/deeper/m.model", false), "");
  EXPECT_FALSE(fs::exists(dir + "/new"));
  EXPECT_EQ(output_file_problem(dir + "/new/deeper/m.model", true), "");
  EXPECT_TRUE(fs::is_directory(dir + "/new/deeper"));
  EXPECT_TRUE(fs::is_empty(dir + "/new/deeper"));  // the probe file is gone
  // A directory that cannot be made: a regular file stands on its path.
  EXPECT_NE(output_file_problem(dir + "/old.model/m.model", true).find("cannot create its directory"),
            std::string::npos);
  EXPECT_EQ(output_file_problem("", true), "no file name");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rocemu
