#include "verify/tensor_dir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/files.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TensorData Tensor(std::string name, DType dtype, std::vector<int64_t> shape, std::string bytes) {
  TensorData t;
  t.entry.name = name;
  t.entry.dtype = dtype;
  t.entry.shape = std::move(shape);
  t.entry.file = name + ".bin";
  t.bytes = std::move(bytes);
  return t;
}

TensorData Scalar(std::string name, std::string json) {
  TensorData t;
  t.entry.name = std::move(name);
  t.entry.is_scalar = true;
  t.entry.scalar_json = std::move(json);
  return t;
}

class TensorDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<fs::path> dir = MakeTempDir("anvil_tensor_dir_test_");
    ASSERT_TRUE(dir.ok()) << dir.message();
    dir_ = dir.value();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      EXPECT_TRUE(RemoveTree(dir_).ok());
    }
  }
  void WriteManifest(const std::string& json) { ASSERT_TRUE(WriteFileAtomic(dir_ / "tensors.json", json).ok()); }
  std::string ManifestError() {
    Result<std::vector<TensorEntry>> r = ReadTensorManifest(dir_);
    EXPECT_FALSE(r.ok());
    return r.message();
  }
  fs::path dir_;
};

TEST_F(TensorDirTest, RoundTripsTensorsAndScalarsInOrder) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> idx = {7, -8};
  const std::vector<TensorData> tensors = {
      Tensor("in0", DType::kFloat32, {2, 3}, Bytes(x)), Scalar("alpha", "0.5"),
      Tensor("in1", DType::kInt64, {2}, Bytes(idx)),    Scalar("flag", "null"),
      Tensor("empty", DType::kBFloat16, {0, 4}, ""),    Tensor("scalar_tensor", DType::kBool, {}, std::string(1, '\1')),
  };
  ASSERT_TRUE(WriteTensorDir(dir_ / "sub", tensors).ok());

  Result<std::vector<TensorEntry>> manifest = ReadTensorManifest(dir_ / "sub");
  ASSERT_TRUE(manifest.ok()) << manifest.message();
  const std::vector<TensorEntry>& entries = manifest.value();
  ASSERT_EQ(entries.size(), tensors.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].name, tensors[i].entry.name);
    EXPECT_EQ(entries[i].is_scalar, tensors[i].entry.is_scalar);
    if (entries[i].is_scalar) {
      EXPECT_EQ(entries[i].scalar_json, tensors[i].entry.scalar_json);
      EXPECT_FALSE(ReadTensorBytes(dir_ / "sub", entries[i]).ok());
      continue;
    }
    EXPECT_EQ(entries[i].dtype, tensors[i].entry.dtype);
    EXPECT_EQ(entries[i].shape, tensors[i].entry.shape);
    EXPECT_EQ(entries[i].file, tensors[i].entry.file);
    Result<std::string> bytes = ReadTensorBytes(dir_ / "sub", entries[i]);
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    EXPECT_EQ(bytes.value(), tensors[i].bytes);
  }

  Result<std::string> bytes = ReadTensorBytes(dir_ / "sub", entries[0]);
  const CompareResult same =
      CompareTensors(MakeTensorView(entries[0], bytes.value()), MakeTensorView(entries[0], bytes.value()),
                     DefaultTolerance(entries[0].dtype));
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.elements, 6);
}

TEST_F(TensorDirTest, ReadsTheProtocolExample) {
  WriteManifest(R"({"version": 1,
 "tensors": [{"name": "in0", "dtype": "float32", "shape": [4, 8], "file": "in0.bin"},
             {"name": "k", "scalar": 3}, {"name": "b", "scalar": true}]})");
  Result<std::vector<TensorEntry>> r = ReadTensorManifest(dir_);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r.value().size(), 3u);
  EXPECT_EQ(r.value()[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(r.value()[1].scalar_json, "3");
  EXPECT_EQ(r.value()[2].scalar_json, "true");
}

TEST_F(TensorDirTest, WrongFileSizeHasAClearMessage) {
  ASSERT_TRUE(WriteTensorDir(dir_, {Tensor("out0", DType::kFloat32, {4}, std::string(16, '\0'))}).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "out0.bin", std::string(12, '\0')).ok());
  const std::vector<TensorEntry> entries = ReadTensorManifest(dir_).value();
  Result<std::string> bytes = ReadTensorBytes(dir_, entries[0]);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.message(),
            "tensor 'out0' (out0.bin) has 12 bytes, expected 16 (shape [4] float32 = 4 elements x "
            "4 bytes)");
}

TEST_F(TensorDirTest, MapsTheSameBytesItReads) {
  TensorData t;
  t.entry.name = "x";
  t.entry.dtype = DType::kInt32;
  t.entry.shape = {3};
  t.entry.file = "x.bin";
  t.bytes = std::string("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12);
  ASSERT_TRUE(WriteTensorDir(dir_, {t}).ok());
  auto entries = ReadTensorManifest(dir_);
  ASSERT_TRUE(entries.ok()) << entries.message();
  auto read = ReadTensorBytes(dir_, entries.value()[0]);
  auto mapped = MapTensorBytes(dir_, entries.value()[0]);
  ASSERT_TRUE(read.ok() && mapped.ok());
  ASSERT_EQ(mapped.value().size(), 12u);
  EXPECT_EQ(std::string(static_cast<const char*>(mapped.value().data()), 12), read.value());
  // A file of the wrong size is refused before it is mapped.
  std::filesystem::resize_file(dir_ / "x.bin", 8);
  auto short_map = MapTensorBytes(dir_, entries.value()[0]);
  ASSERT_FALSE(short_map.ok());
  EXPECT_NE(short_map.message().find("has 8 bytes, expected 12"), std::string::npos) << short_map.message();
}

TEST_F(TensorDirTest, MissingTensorFile) {
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "int8", "shape": [1], "file": "a.bin"}]})");
  const std::vector<TensorEntry> entries = ReadTensorManifest(dir_).value();
  Result<std::string> bytes = ReadTensorBytes(dir_, entries[0]);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.message().find("a.bin"), std::string::npos);
}

TEST_F(TensorDirTest, RejectsMalformedManifests) {
  EXPECT_NE(ManifestError().find("tensors.json"), std::string::npos);  // Missing.
  WriteManifest("{not json");
  EXPECT_NE(ManifestError().find("not valid JSON"), std::string::npos);
  WriteManifest("[]");
  EXPECT_NE(ManifestError().find("not a JSON object"), std::string::npos);
  WriteManifest(R"({"version": 2, "tensors": []})");
  EXPECT_NE(ManifestError().find("version"), std::string::npos);
  WriteManifest(R"({"version": 1})");
  EXPECT_NE(ManifestError().find("\"tensors\""), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"dtype": "float32", "shape": [1], "file": "a"}]})");
  EXPECT_NE(ManifestError().find("\"name\""), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "complex64", "shape": [1], "file": "a"}]})");
  EXPECT_NE(ManifestError().find("complex64"), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "float32", "shape": [2.5], "file": "a"}]})");
  EXPECT_NE(ManifestError().find("shape"), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "float32", "shape": [-1], "file": "a"}]})");
  EXPECT_NE(ManifestError().find("invalid shape"), std::string::npos);
  WriteManifest(
      R"({"version": 1, "tensors": [{"name": "a", "dtype": "float64", "shape": [4294967296, 4294967296], "file": "a"}]})");
  EXPECT_NE(ManifestError().find("invalid shape"), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "float32", "shape": 3, "file": "a"}]})");
  EXPECT_NE(ManifestError().find("shape"), std::string::npos);
  WriteManifest(R"({"version": 1, "tensors": [{"name": "a", "dtype": "float32", "shape": [1]}]})");
  EXPECT_NE(ManifestError().find("\"file\""), std::string::npos);
}

TEST_F(TensorDirTest, RejectsFileNamesOutsideTheDirectory) {
  for (const char* bad : {"../secret", "/etc/passwd", "a/b", "..", ".", ""}) {
    WriteManifest(std::string(R"({"version": 1, "tensors": [{"name": "a", "dtype": "uint8", "shape": [1], "file": ")") +
                  bad + "\"}]}");
    EXPECT_NE(ManifestError().find("unsafe file name"), std::string::npos) << bad;
  }
  TensorEntry entry;
  entry.name = "a";
  entry.dtype = DType::kUInt8;
  entry.shape = {1};
  entry.file = "../x";
  EXPECT_FALSE(ReadTensorBytes(dir_, entry).ok());
}

TEST_F(TensorDirTest, WriterValidates) {
  EXPECT_FALSE(WriteTensorDir(dir_, {Tensor("a", DType::kFloat32, {3}, std::string(8, '\0'))}).ok());
  TensorData bad_name = Tensor("a", DType::kUInt8, {1}, "x");
  bad_name.entry.file = "../a.bin";
  EXPECT_FALSE(WriteTensorDir(dir_, {bad_name}).ok());
  EXPECT_FALSE(WriteTensorDir(dir_, {Scalar("s", "{oops")}).ok());
  EXPECT_FALSE(fs::exists(dir_ / "tensors.json"));
}

}  // namespace
}  // namespace anvil
