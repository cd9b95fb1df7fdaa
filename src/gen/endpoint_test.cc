#include "gen/endpoint.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace anvil {
namespace {

TEST(EndpointTest, TheFlagThenTheVariables) {
  unsetenv("ANVIL_OPENAI_BASE_URL");
  setenv("OPENAI_BASE_URL", "http://openai-var:1/v1", 1);
  EXPECT_EQ(ResolveEndpoint("http://flag:8000/v1/").value(), "http://flag:8000/v1");
  EXPECT_EQ(ResolveEndpoint("").value(), "http://openai-var:1/v1");
  setenv("ANVIL_OPENAI_BASE_URL", "https://anvil-var/v1", 1);
  EXPECT_EQ(ResolveEndpoint("").value(), "https://anvil-var/v1");
  unsetenv("ANVIL_OPENAI_BASE_URL");
  unsetenv("OPENAI_BASE_URL");
  auto none = ResolveEndpoint("");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("--endpoint"), std::string::npos) << none.message();
}

TEST(EndpointTest, RefusesWhatIsNotAnHttpUrlWithoutQuotingSecrets) {
  for (const char* bad : {"localhost:8000/v1", "ftp://host/v1", "http://", "http:///v1"}) {
    EXPECT_FALSE(ResolveEndpoint(bad).ok()) << bad;
  }
  auto r = ResolveEndpoint("htp://user:sk-secret@host/v1?key=sk-secret");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().find("sk-secret"), std::string::npos) << r.message();
}

TEST(EndpointTest, TheRecordDropsUserinfoQueryAndFragment) {
  EXPECT_EQ(RecordedEndpoint("https://user:pw@host:8000/v1?api-key=k#x"), "https://host:8000/v1");
  EXPECT_EQ(RecordedEndpoint("http://host/v1"), "http://host/v1");
  EXPECT_EQ(RecordedEndpoint("http://tok@host"), "http://host");
  EXPECT_EQ(RecordedEndpoint("http://host/path@odd"), "http://host/path@odd");
  EXPECT_EQ(ChatCompletionsUrl("http://h/v1"), "http://h/v1/chat/completions");
}

TEST(EndpointTest, RecordsOnlyAllowedHeaders) {
  auto kept = RecordedHeaders({{"content-type", "application/json"},
                               {"x-ratelimit-remaining-tokens", "9"},
                               {"set-cookie", "session=abc"},
                               {"authorization", "Bearer k"},
                               {"x-request-id", "r1"}});
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.count("set-cookie"), 0u);
  EXPECT_EQ(kept.count("authorization"), 0u);
  EXPECT_EQ(kept["x-ratelimit-remaining-tokens"], "9");
}

}  // namespace
}  // namespace anvil
