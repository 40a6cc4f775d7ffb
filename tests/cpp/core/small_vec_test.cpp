// SmallVec: inline storage, growth to the heap, copies and moves in both states.
#include <cstdint>

#include "test_util.h"

namespace ef {
namespace {

using V = SmallVec<int64_t, 4>;

std::vector<int64_t> contents(const V& v) { return {v.begin(), v.end()}; }

TEST(SmallVec, InlineThenHeap) {
  V v;
  EXPECT_TRUE(v.empty());
  for (int64_t i = 0; i < 4; ++i) v.push_back(i);
  const int64_t* inline_data = v.data();
  EXPECT_EQ(contents(v), (std::vector<int64_t>{0, 1, 2, 3}));
  v.push_back(4);  // grows past N onto the heap, keeping the values
  EXPECT_NE(v.data(), inline_data);
  for (int64_t i = 5; i < 100; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 100u);
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], i);
  EXPECT_EQ(v.back(), 99);
  v.pop_back();
  EXPECT_EQ(v.size(), 99u);
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SmallVec, Constructors) {
  EXPECT_EQ(contents(V{1, 2, 3}), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(contents(V(3, 7)), (std::vector<int64_t>{7, 7, 7}));
  std::vector<int> src{5, 6, 7, 8, 9, 10};
  EXPECT_EQ(contents(V(src.begin(), src.end())), (std::vector<int64_t>{5, 6, 7, 8, 9, 10}));
}

TEST(SmallVec, CopyAndMoveInlineAndHeap) {
  for (size_t n : {size_t{2}, size_t{9}}) {
    V a;
    for (size_t i = 0; i < n; ++i) a.push_back(static_cast<int64_t>(i * 10));
    V copy = a;
    EXPECT_EQ(copy, a);
    copy[0] = -1;
    EXPECT_EQ(a[0], 0);  // deep copy
    V moved = std::move(copy);
    EXPECT_EQ(moved.size(), n);
    EXPECT_EQ(moved[0], -1);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    V assigned{42};
    assigned = a;
    EXPECT_EQ(assigned, a);
    V move_assigned{1, 2, 3, 4, 5, 6};
    move_assigned = std::move(assigned);
    EXPECT_EQ(move_assigned, a);
    V& alias = move_assigned;
    move_assigned = alias;  // self-assignment keeps the values
    EXPECT_EQ(move_assigned, a);
  }
}

TEST(SmallVec, InsertEraseResize) {
  V v{1, 2, 4};
  v.insert(2, 3);
  EXPECT_EQ(contents(v), (std::vector<int64_t>{1, 2, 3, 4}));
  v.insert(0, 0);  // grows to the heap
  EXPECT_EQ(contents(v), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  v.insert(5, 5);
  EXPECT_EQ(contents(v), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  v.erase(0);
  v.erase(4);
  EXPECT_EQ(contents(v), (std::vector<int64_t>{1, 2, 3, 4}));
  v.resize(6, 9);
  EXPECT_EQ(contents(v), (std::vector<int64_t>{1, 2, 3, 4, 9, 9}));
  v.resize(1);
  EXPECT_EQ(contents(v), (std::vector<int64_t>{1}));
  EXPECT_FALSE(v == (V{2}));
  EXPECT_FALSE(v == (V{1, 1}));
}

}  // namespace
}  // namespace ef
