#pragma once
// The editor's document: a Scene changed only through commands, so every edit can be
// undone and redone, and "unsaved changes" is known exactly. A command records the scene
// before and after it; consecutive edits with the same merge key (one drag of one field,
// one gizmo drag) collapse into one undo step until end_merge(). A cloth's or soft body's
// optimized initial state (particle_positions/velocities) follows edits of its placement and
// is dropped when its particles change.
//
// TODO(editor): commands hold whole scenes. That is a few KB for the reference scenes;
// a scene with a million listed particles would want per-object diffs instead. Safe to
// leave: history is capped at k_history_limit steps.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/scene/scene.h"

namespace adj::editor {

class Document {
 public:
  static constexpr size_t k_history_limit = 256;  // undo steps kept

  Document() = default;
  Document(scene::Scene scene, std::string path);

  const scene::Scene& scene() const { return scene_; }
  const std::string& path() const { return path_; }  // empty: never saved
  std::string base_dir() const;                      // resolves relative mesh paths
  uint64_t revision() const { return revision_; }    // changes with every edit, undo, redo
  // a document that replaces another goes on from its revisions, so that nothing published
  // for the old one (the worker's optimization) matches the new one by accident
  void continue_revisions(uint64_t after) { revision_ = std::max(revision_, after + 1); }
  bool dirty() const { return top_id() != saved_id_; }  // differs from the file on disk
  void mark_saved(const std::string& path);
  // file references (meshes, URDFs) in the scene and its whole history made relative to
  // `dir` instead of base_dir() (Save As into another directory); not an edit
  void rebase_paths(const std::string& dir);

  // edits; each is one undo step unless merged. No-ops (same value) record nothing.
  void set_object(int index, scene::Object object, const std::string& label, uint64_t merge_key = 0);
  void set_settings(scene::Settings settings, const std::string& label, uint64_t merge_key = 0);
  void set_task(int index, scene::Task task, const std::string& label, uint64_t merge_key = 0);
  // name made unique; returns its index. settings (optional): the scene's new settings, in the
  // same undo step
  int add_object(scene::Object object, const std::string& label, const scene::Settings* settings = nullptr);
  int duplicate_object(int index);                         // the copy's index, after the original
  void delete_object(int index);                           // also drops task parameters and loss terms naming it
  bool rename_object(int index, const std::string& name);  // false if taken or empty; tasks follow
  void replace(scene::Scene scene, const std::string& label, uint64_t merge_key = 0);
  // loss terms of task `task` (Optimization panel); each one undo step unless merged
  int add_loss_term(int task, scene::LossTerm term);  // the new term's index, or -1 (no such task)
  bool remove_loss_term(int task, int term);          // false: no such task or term
  bool set_loss_term(int task, int term, scene::LossTerm value, const std::string& label, uint64_t merge_key = 0);
  void end_merge() { merge_open_ = false; }

  bool can_undo() const { return undo_.size() > 0; }
  bool can_redo() const { return redo_.size() > 0; }
  bool undo();
  bool redo();
  std::string undo_label() const { return can_undo() ? undo_.back().label : ""; }
  std::string redo_label() const { return can_redo() ? redo_.back().label : ""; }
  size_t undo_count() const { return undo_.size(); }

 private:
  struct Command {
    std::string label;
    scene::Scene before, after;
    uint64_t merge_key = 0;
    uint64_t id = 0;  // unique; the saved state is named by the id on top of the undo stack
  };
  void commit(scene::Scene after, const std::string& label, uint64_t merge_key);
  uint64_t top_id() const { return undo_.empty() ? 0 : undo_.back().id; }

  scene::Scene scene_;
  std::string path_;
  std::vector<Command> undo_, redo_;
  uint64_t next_id_ = 1;
  uint64_t saved_id_ = 0;
  uint64_t revision_ = 1;
  bool merge_open_ = false;
};

// true when a and b simulate the same: they differ only in what the solver never reads
// (names, visibility, targets, tasks, the scene's name). Such edits keep the playback going.
bool same_simulation(const scene::Scene& a, const scene::Scene& b);

// "cloth" -> "cloth" if free, else "cloth.001", "cloth.002", ... (Blender's way)
std::string unique_name(const scene::Scene& scene, const std::string& base);

}  // namespace adj::editor
