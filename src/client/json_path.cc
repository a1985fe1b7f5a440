#include "client/json_path.h"

#include <memory>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace clusterd::client {
namespace {

using Json = nlohmann::ordered_json;

struct Segment {
  enum Kind { kField, kIndex, kAll } kind = kField;
  std::string field;
  int64_t index = 0;
};

struct Path {
  bool from_root = false;
  std::vector<Segment> segments;
};

struct Node {
  enum Kind { kText, kPath, kRange } kind = kText;
  std::string text;        // kText
  Path path;               // kPath, kRange
  std::vector<Node> body;  // kRange
};

absl::Status Error(size_t at, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("jsonpath: ", std::string(what), " at position ", at));
}

absl::StatusOr<Path> ParsePath(absl::string_view text, size_t at) {
  Path path;
  size_t i = 0;
  if (!text.empty() && (text[0] == '$' || text[0] == '@')) {
    path.from_root = text[0] == '$';
    i = 1;
  }
  while (i < text.size()) {
    if (text[i] == '.') {
      ++i;
      size_t start = i;
      while (i < text.size() && text[i] != '.' && text[i] != '[') ++i;
      if (i == start) {
        if (i == text.size() && path.segments.empty()) break;  // "{.}": the current value
        return Error(at + start, "an empty field name");
      }
      path.segments.push_back({Segment::kField, std::string(text.substr(start, i - start)), 0});
    } else if (text[i] == '[') {
      const size_t close = text.find(']', i);
      if (close == absl::string_view::npos) return Error(at + i, "a [ without ]");
      absl::string_view inner = text.substr(i + 1, close - i - 1);
      if (inner == "*") {
        path.segments.push_back({Segment::kAll, "", 0});
      } else if (inner.size() >= 2 && (inner.front() == '\'' || inner.front() == '"') &&
                 inner.back() == inner.front()) {
        path.segments.push_back(
            {Segment::kField, std::string(inner.substr(1, inner.size() - 2)), 0});
      } else {
        int64_t n = 0;
        if (!absl::SimpleAtoi(inner, &n)) {
          return Error(at + i, absl::StrCat("an index that is not a number: [", inner, "]"));
        }
        path.segments.push_back({Segment::kIndex, "", n});
      }
      i = close + 1;
    } else {
      return Error(at + i, absl::StrCat("an unexpected '", std::string(1, text[i]), "'"));
    }
  }
  return path;
}

// Parses `templ` from `*pos` until the end or a {end} (consumed) when `in_range`.
absl::Status ParseNodes(absl::string_view templ, size_t* pos, bool in_range,
                        std::vector<Node>* out) {
  while (*pos < templ.size()) {
    const size_t open = templ.find('{', *pos);
    if (open != *pos) {
      const size_t end = open == absl::string_view::npos ? templ.size() : open;
      out->push_back({Node::kText, std::string(templ.substr(*pos, end - *pos)), {}, {}});
      *pos = end;
      continue;
    }
    const size_t close = templ.find('}', open);
    if (close == absl::string_view::npos) return Error(open, "a { without }");
    absl::string_view expr = absl::StripAsciiWhitespace(templ.substr(open + 1, close - open - 1));
    *pos = close + 1;
    if (expr == "end") {
      if (!in_range) return Error(open, "{end} without {range}");
      return absl::OkStatus();
    }
    if (!expr.empty() && expr.front() == '"') {
      if (expr.size() < 2 || expr.back() != '"') return Error(open, "an unterminated quote");
      std::string text;
      for (size_t i = 1; i + 1 < expr.size(); ++i) {
        if (expr[i] == '\\' && i + 2 < expr.size()) {
          const char c = expr[++i];
          text.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c);
        } else {
          text.push_back(expr[i]);
        }
      }
      out->push_back({Node::kText, std::move(text), {}, {}});
      continue;
    }
    if (absl::ConsumePrefix(&expr, "range ")) {
      absl::StatusOr<Path> path = ParsePath(absl::StripAsciiWhitespace(expr), open);
      if (!path.ok()) return path.status();
      Node range{Node::kRange, "", *std::move(path), {}};
      if (absl::Status s = ParseNodes(templ, pos, true, &range.body); !s.ok()) {
        // The body's own error, or the range's: it ran to the end without {end}.
        return absl::StrContains(s.message(), "without {end}")
                   ? Error(open, "{range} without {end}")
                   : s;
      }
      out->push_back(std::move(range));
      continue;
    }
    absl::StatusOr<Path> path = ParsePath(expr, open + 1);
    if (!path.ok()) return path.status();
    out->push_back({Node::kPath, "", *std::move(path), {}});
  }
  if (in_range) return Error(templ.size(), "{range} without {end}");
  return absl::OkStatus();
}

std::vector<const Json*> Evaluate(const Path& path, const Json& current, const Json& root) {
  std::vector<const Json*> values = {path.from_root ? &root : &current};
  for (const Segment& s : path.segments) {
    std::vector<const Json*> next;
    for (const Json* v : values) {
      switch (s.kind) {
        case Segment::kField:
          if (v->is_object()) {
            if (auto it = v->find(s.field); it != v->end()) next.push_back(&*it);
          }
          break;
        case Segment::kIndex:
          if (v->is_array()) {
            const int64_t n = static_cast<int64_t>(v->size());
            const int64_t i = s.index < 0 ? n + s.index : s.index;
            if (i >= 0 && i < n) next.push_back(&(*v)[static_cast<size_t>(i)]);
          }
          break;
        case Segment::kAll:
          if (v->is_array() || v->is_object()) {
            for (const Json& child : *v) next.push_back(&child);
          }
          break;
      }
    }
    values = std::move(next);
  }
  return values;
}

std::string Text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void Render(const std::vector<Node>& nodes, const Json& current, const Json& root,
            std::string* out) {
  for (const Node& n : nodes) {
    switch (n.kind) {
      case Node::kText:
        out->append(n.text);
        break;
      case Node::kPath: {
        bool first = true;
        for (const Json* v : Evaluate(n.path, current, root)) {
          if (!first) out->push_back(' ');
          out->append(Text(*v));
          first = false;
        }
        break;
      }
      case Node::kRange:
        for (const Json* v : Evaluate(n.path, current, root)) {
          // A range over one array value repeats for each element, as kubectl's does.
          if (v->is_array() && !n.path.segments.empty() &&
              n.path.segments.back().kind != Segment::kAll) {
            for (const Json& e : *v) Render(n.body, e, root, out);
          } else {
            Render(n.body, *v, root, out);
          }
        }
        break;
    }
  }
}

}  // namespace

absl::StatusOr<std::string> RenderJsonPath(std::string_view template_text, const Json& root) {
  const absl::string_view templ(template_text.data(), template_text.size());
  std::vector<Node> nodes;
  size_t pos = 0;
  if (absl::Status s = ParseNodes(templ, &pos, false, &nodes); !s.ok()) return s;
  std::string out;
  Render(nodes, root, root, &out);
  return out;
}

}  // namespace clusterd::client
