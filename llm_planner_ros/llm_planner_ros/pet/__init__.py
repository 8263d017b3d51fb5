"""Plan, Eliminate, Track (Wu et al.): subtask decomposition, object elimination and a progress
tracker that asks "Did you finish the task of <subtask>?" after each executed skill."""
