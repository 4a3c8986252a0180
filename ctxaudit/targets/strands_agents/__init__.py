"""strands-agents as a target: an ``Agent`` whose conversation a manager folds or trims and
a ``FileSessionManager`` persists, on the restore concern's shared lockstep."""
