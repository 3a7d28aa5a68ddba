"""Study rooms: which store this process uses (app/room/store.py, from its environment). The rules, the stores and
the actions pages take are core's: core/room."""
