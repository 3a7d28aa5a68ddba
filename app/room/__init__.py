"""Study rooms: the store that holds them (app/room/store.py) and the actions pages take on them
(app/room/actions.py). The rules themselves (what is allowed, summaries) are pure: core/room."""
