// ConversationLinker on hand-made block chains: a turn that re-sends its conversation joins
// it; the first block (a template or system prompt) and a prefix another conversation
// carries join nobody; a partial last block ends nothing; a turn must come later and be no
// shorter; a stranger sharing an earlier block does not break a chain.
#include "trace/conversation_linker.h"

#include <gtest/gtest.h>

#include <vector>

namespace infereng::trace {
namespace {

int64_t LinkOf(ConversationLinker& l, std::vector<uint64_t> ids, int64_t input, double t) {
  return l.Link(ids, input, t);
}

TEST(ConversationLinker, TurnsJoinAndASharedPrefixJoinsNobody) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1, 2}, 1300, 0), 0);      // A: whole blocks 0, 1 (end 1); 2 partial
  EXPECT_EQ(LinkOf(l, {0, 3, 4}, 1100, 1), 1);      // B: shares only 0 with A; 0 is now shared
  EXPECT_EQ(LinkOf(l, {0, 1, 2, 5}, 1800, 2), 0);   // A's next turn: end 1 is A's alone
  EXPECT_EQ(LinkOf(l, {0, 3, 4, 6}, 1700, 3), 1);   // B's next turn (B's end 3)
  EXPECT_EQ(LinkOf(l, {0, 1, 9, 9}, 2048, 4), 0);   // the deepest end (1, A's first turn's) decides
  EXPECT_EQ(l.conversations(), 2);
  EXPECT_EQ(l.follow_ups(), 3);
}

TEST(ConversationLinker, TheFirstBlockAloneLinksNothing) {
  // Every prompt starts with the same template block 0. A first turn of one whole block
  // ends at 0: a later prompt that carries 0 is not told apart from a stranger, so it is not
  // linked, even while nobody else has carried 0 (one early short prompt would otherwise
  // gather every later request into its conversation).
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1}, 600, 0), 0);
  EXPECT_EQ(LinkOf(l, {0, 7, 8}, 1100, 1), 1);
  EXPECT_EQ(LinkOf(l, {0, 7, 8, 9}, 1600, 2), 1);  // past the first block (end 7): linked
  EXPECT_EQ(l.follow_ups(), 1);
}

TEST(ConversationLinker, APartialLastBlockIsNotAnEnd) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1, 2}, 1100, 0), 0);      // whole 0, 1; 2 partial
  EXPECT_EQ(LinkOf(l, {0, 1, 2, 5}, 1900, 1), 0);   // through end 1
  ConversationLinker bigger(1024);  // the same ids with 1024-token blocks: 1100 tokens is one whole block
  EXPECT_EQ(LinkOf(bigger, {0, 1, 2}, 1100, 0), 0);
  EXPECT_EQ(LinkOf(bigger, {0, 1, 2, 5}, 1900, 1), 1);  // its end is the first block
}

TEST(ConversationLinker, ATurnComesLaterAndIsNoShorter) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1, 2}, 1300, 5), 0);
  EXPECT_EQ(LinkOf(l, {0, 1, 2, 3}, 1800, 5), 1);  // the same second: not an answer's follow-up
  ConversationLinker m(512);
  EXPECT_EQ(LinkOf(m, {0, 1, 2}, 1300, 5), 0);
  EXPECT_EQ(LinkOf(m, {0, 1, 3}, 1200, 9), 1);     // shorter: it does not re-send A's prompt
  ConversationLinker n(512);
  EXPECT_EQ(LinkOf(n, {0, 1, 2}, 1300, 5), 0);
  EXPECT_EQ(LinkOf(n, {0, 1, 2}, 1300, 9), 0);     // the same prompt again (a regenerated turn)
}

TEST(ConversationLinker, AStrangerSharingAnEarlierBlockDoesNotBreakTheChain) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1, 2, 3}, 2048, 0), 0);     // A: end 3
  EXPECT_EQ(LinkOf(l, {0, 1, 7}, 1100, 1), 1);        // X: carries 0 and 1 (now shared), ends at 1
  EXPECT_EQ(LinkOf(l, {0, 1, 2, 3, 8}, 2600, 2), 0);  // A's next turn: end 3 is still A's alone
  EXPECT_EQ(LinkOf(l, {0, 1, 9}, 1500, 3), 2);        // deepest end 1 is shared: a new conversation
  EXPECT_EQ(l.follow_ups(), 1);
}

// A block another conversation carried is never an end to link through, even though the
// end it is belongs to the conversation that carried it first.
TEST(ConversationLinker, AnEndAStrangerCarriedLinksNobody) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {0, 1, 2}, 1300, 0), 0);     // X: end 1
  EXPECT_EQ(LinkOf(l, {0, 1, 7, 8}, 2000, 0), 1);  // D, the same second: not X's turn; carries 1
  EXPECT_EQ(LinkOf(l, {0, 1, 5}, 1400, 1), 2);     // its deepest end is X's 1, which D carried too
  EXPECT_EQ(l.follow_ups(), 0);
}

TEST(ConversationLinker, NoHashIdsIsAConversationOfItsOwn) {
  ConversationLinker l(512);
  EXPECT_EQ(LinkOf(l, {}, 100, 0), 0);
  EXPECT_EQ(LinkOf(l, {}, 100, 1), 1);
  EXPECT_EQ(LinkOf(l, {4}, 0, 2), 2);        // no whole block: leaves no end
  EXPECT_EQ(LinkOf(l, {4, 5}, 700, 3), 3);   // 4 is private to the one before, but it ended nothing
  EXPECT_EQ(l.conversations(), 4);
}

}  // namespace
}  // namespace infereng::trace
