; VirtualHome (evolving graph) as PDDL, written against virtualhome-eval 0.1.1's
; simulation/evolving_graph/execution.py: each action's precondition is the simulator's check,
; each effect its state change. (reachable ?c ?o) is the simulator's "loose" closeness rule: the
; character reaches an object it is close to, one close to an object it is close to, or one lying
; on it. It is set when the character arrives (walk, grab, put) and cut when a walk or a grab
; removes the closeness it came from; one predicate keeps grounding small (no disjunction to split).
; Grabbing an object cuts every ON / INSIDE / CLOSE edge it has, both ways, as the simulator does.
; Effects the planner never needs are left out, so the model never claims a fact the simulator
; lacks (test/test_pddl_domain.py replays the human programs to check both directions).
; did_<verb> records that an action was done (on an object, where it takes one), for action goals.
; Skills: each action becomes one skill of the executor, named by a line
;   ; skill <action>: <VERB> <parameter> ... | <words, {0} the first parameter's object>
; (the contract a robot's own domain follows too; see README, "Goal-directed planning").
; Predicates the model keeps for itself (the executor does not observe them; not checked after a step):
; unobserved: sit_full lie_full grabbed reachable
; skill walk_to_room: WALK ?r | walk to {0}
; skill walk_to: WALK ?o | walk to {0}
; skill find: FIND ?o | find {0}
; skill sit: SIT ?o | sit on {0}
; skill lie: LIE ?o | lie on {0}
; skill standup: STANDUP | stand up
; skill grab_rh: GRAB ?o | grab {0}
; skill grab_lh: GRAB ?o | grab {0}
; skill open_it: OPEN ?o | open {0}
; skill close_it: CLOSE ?o | close {0}
; skill putback: PUTBACK ?a ?b | put {0} on {1}
; skill putin: PUTIN ?a ?b | put {0} in {1}
; skill drop: DROP ?o | drop {0}
; skill put_on_character: PUTON ?o | put on {0}
; skill switch_on: SWITCHON ?o | switch on {0}
; skill switch_off: SWITCHOFF ?o | switch off {0}
; skill plug_in: PLUGIN ?o | plug in {0}
; skill plug_out: PLUGOUT ?o | plug out {0}
; skill turn_to: TURNTO ?o | turn to {0}
; skill look_at: LOOKAT ?o | look at {0}
; skill watch: WATCH ?o | watch {0}
; skill drink: DRINK ?o | drink {0}
; skill read: READ ?o | read {0}
; skill touch: TOUCH ?o | touch {0}
; skill type: TYPE ?o | type on {0}
; skill push: PUSH ?o | push {0}
; skill wash: WASH ?o | wash {0}
; skill rinse: RINSE ?o | rinse {0}
; skill scrub: SCRUB ?o | scrub {0}
; skill wipe: WIPE ?o | wipe {0}
; skill pour: POUR ?a ?b | pour {0} into {1}
; skill eat: EAT ?o | eat {0}
; skill sleep: SLEEP | sleep
; skill wakeup: WAKEUP | wake up
(define (domain virtualhome)
  (:requirements :adl :typing :equality)
  (:types character object)
  (:predicates
    ; states
    (on ?o - object) (off ?o - object) (open ?o - object) (closed ?o - object)
    (plugged_in ?o - object) (plugged_out ?o - object)
    (sitting ?c - character) (lying ?c - character)
    ; relations
    (inside ?c - character ?r - object)         ; the character is in room ?r
    (inside_room ?o - object ?r - object)       ; object ?o is in room ?r
    (obj_inside ?a - object ?b - object)        ; ?a is inside ?b (not a room)
    (obj_ontop ?a - object ?b - object)         ; ?a is on ?b
    (obj_next_to ?a - object ?b - object)       ; the graph's CLOSE edge between objects
    (obj_facing ?a - object ?b - object)        ; the graph's FACING edge between objects
    (next_to ?c - character ?o - object)        ; the character is close to ?o (a CLOSE edge)
    (reachable ?c - character ?o - object)      ; the loose rule holds for ?o
    (reach_via ?o - object ?x - object)         ; ?x is close to or on a container or surface of ?o
    (facing ?c - character ?o - object)
    (holds_rh ?c - character ?o - object) (holds_lh ?c - character ?o - object)
    (ontop ?c - character ?o - object)          ; the character sits or lies on ?o
    (on_char ?o - object ?c - character)        ; ?o (clothes) is worn
    (grabbed ?o - object)                       ; grabbed and not yet put down
    ; static properties
    (is_room ?o - object) (grabbable ?o - object) (can_open ?o - object) (has_switch ?o - object)
    (has_plug ?o - object) (lookable ?o - object) (readable ?o - object) (drinkable ?o - object)
    (recipient ?o - object) (pourable ?o - object) (pour_target ?o - object) (sittable ?o - object)
    (lieable ?o - object) (body_part ?o - object) (clothes ?o - object) (eatable ?o - object)
    (typeable ?o - object) (surfaces ?o - object) (containers ?o - object)
    (movable ?o - object) (is_water ?o - object) (sit_full ?o - object) (lie_full ?o - object)
    ; actions done (action goals)
    (did_drink ?o - object) (did_lookat ?o - object) (did_watch ?o - object) (did_read ?o - object)
    (did_touch ?o - object) (did_type ?o - object) (did_grab ?o - object) (did_wash ?o - object)
    (did_rinse ?o - object) (did_scrub ?o - object) (did_wipe ?o - object) (did_pour ?o - object)
    (did_push ?o - object) (did_switchon ?o - object) (did_switchoff ?o - object) (did_eat ?o - object)
    (did_puton ?o - object) (did_sleep) (did_wakeup))

  (:action walk_to_room
    :parameters (?c - character ?r - object)
    :precondition (and (is_room ?r) (not (sitting ?c)) (not (lying ?c)))
    :effect (and
      (inside ?c ?r)
      (forall (?x - object) (when (not (= ?x ?r)) (not (inside ?c ?x))))
      (forall (?x - object) (not (facing ?c ?x)))
      (forall (?x - object) (when (and (not (holds_rh ?c ?x)) (not (holds_lh ?c ?x)))
                                  (and (not (next_to ?c ?x)) (not (reachable ?c ?x)))))))

  (:action walk_to
    :parameters (?c - character ?o - object ?r - object)
    :precondition (and (not (is_room ?o)) (is_room ?r) (inside_room ?o ?r)
                       (not (sitting ?c)) (not (lying ?c)))
    :effect (and
      (inside ?c ?r)
      (forall (?x - object) (when (not (= ?x ?r)) (not (inside ?c ?x))))
      (forall (?x - object) (not (facing ?c ?x)))
      (next_to ?c ?o)
      (forall (?x - object)
        (when (or (obj_inside ?o ?x) (obj_ontop ?o ?x) (and (can_open ?o) (obj_inside ?x ?o))
                  (holds_rh ?c ?x) (holds_lh ?c ?x) (body_part ?x))
              (next_to ?c ?x)))
      (forall (?x - object)
        (when (and (not (= ?x ?o)) (not (obj_inside ?o ?x)) (not (obj_ontop ?o ?x))
                   (not (and (can_open ?o) (obj_inside ?x ?o)))
                   (not (holds_rh ?c ?x)) (not (holds_lh ?c ?x)) (not (body_part ?x)))
              (not (next_to ?c ?x))))
      ; reach: all of it is recomputed (an add wins over the delete of the same atom, in Fast
      ; Downward as in unified-planning): the new close set, and the loose rule through ?o and
      ; through what holds ?o (reach_via, read off the world with it)
      (forall (?x - object) (not (reachable ?c ?x)))
      (reachable ?c ?o)
      (forall (?x - object)
        (when (or (obj_inside ?o ?x) (obj_ontop ?o ?x) (and (can_open ?o) (obj_inside ?x ?o))
                  (holds_rh ?c ?x) (holds_lh ?c ?x) (body_part ?x)
                  (obj_next_to ?o ?x) (obj_ontop ?x ?o))
              (reachable ?c ?x)))
      (forall (?x - object) (when (reach_via ?o ?x) (reachable ?c ?x)))))

  (:action find
    :parameters (?c - character ?o - object)
    :precondition (reachable ?c ?o)
    :effect (and (next_to ?c ?o) (forall (?x - object) (not (facing ?c ?x)))))

  (:action sit
    :parameters (?c - character ?o - object)
    :precondition (and (sittable ?o) (not (sit_full ?o)) (not (sitting ?c))
                       (reachable ?c ?o))
    :effect (and (sitting ?c) (not (lying ?c)) (ontop ?c ?o) (sit_full ?o) (lie_full ?o)
                 (forall (?x - object) (when (obj_facing ?o ?x) (facing ?c ?x)))))

  (:action lie
    :parameters (?c - character ?o - object)
    :precondition (and (lieable ?o) (not (lie_full ?o)) (not (lying ?c))
                       (reachable ?c ?o))
    :effect (and (lying ?c) (not (sitting ?c)) (ontop ?c ?o) (sit_full ?o) (lie_full ?o)))

  (:action standup
    :parameters (?c - character)
    :precondition (or (sitting ?c) (lying ?c))
    :effect (and (not (sitting ?c)) (not (lying ?c))))

  (:action grab_rh
    :parameters (?c - character ?o - object)
    :precondition (and (grabbable ?o) (not (grabbed ?o))
                       (not (exists (?x - object) (holds_rh ?c ?x)))
                       (reachable ?c ?o)
                       (not (exists (?b - object) (and (obj_inside ?o ?b) (closed ?b)))))
    :effect (and (holds_rh ?c ?o) (grabbed ?o) (next_to ?c ?o) (reachable ?c ?o) (did_grab ?o)
                 (forall (?x - object) (and (not (reach_via ?x ?o)) (not (reach_via ?o ?x))))
                 (forall (?x - object) (when (and (or (obj_next_to ?o ?x) (obj_ontop ?x ?o) (obj_inside ?x ?o))
                                                  (not (next_to ?c ?x)) (not (= ?x ?o)))
                                             (not (reachable ?c ?x))))
                 (forall (?x - object) (and (not (obj_ontop ?o ?x)) (not (obj_inside ?o ?x))
                                            (not (obj_ontop ?x ?o)) (not (obj_inside ?x ?o))
                                            (not (obj_next_to ?o ?x)) (not (obj_next_to ?x ?o))
                                            (not (inside_room ?o ?x))))))

  (:action grab_lh
    :parameters (?c - character ?o - object)
    :precondition (and (grabbable ?o) (not (grabbed ?o))
                       (exists (?x - object) (holds_rh ?c ?x))
                       (not (exists (?x - object) (holds_lh ?c ?x)))
                       (reachable ?c ?o)
                       (not (exists (?b - object) (and (obj_inside ?o ?b) (closed ?b)))))
    :effect (and (holds_lh ?c ?o) (grabbed ?o) (next_to ?c ?o) (reachable ?c ?o) (did_grab ?o)
                 (forall (?x - object) (and (not (reach_via ?x ?o)) (not (reach_via ?o ?x))))
                 (forall (?x - object) (when (and (or (obj_next_to ?o ?x) (obj_ontop ?x ?o) (obj_inside ?x ?o))
                                                  (not (next_to ?c ?x)) (not (= ?x ?o)))
                                             (not (reachable ?c ?x))))
                 (forall (?x - object) (and (not (obj_ontop ?o ?x)) (not (obj_inside ?o ?x))
                                            (not (obj_ontop ?x ?o)) (not (obj_inside ?x ?o))
                                            (not (obj_next_to ?o ?x)) (not (obj_next_to ?x ?o))
                                            (not (inside_room ?o ?x))))))

  (:action open_it
    :parameters (?c - character ?o - object)
    :precondition (and (can_open ?o) (closed ?o) (not (on ?o))
                       (not (and (exists (?x - object) (holds_rh ?c ?x)) (exists (?x - object) (holds_lh ?c ?x))))
                       (reachable ?c ?o))
    :effect (and (open ?o) (not (closed ?o))))

  (:action close_it
    :parameters (?c - character ?o - object)
    :precondition (and (can_open ?o) (open ?o)
                       (reachable ?c ?o))
    :effect (and (closed ?o) (not (open ?o))))

  (:action putback
    :parameters (?c - character ?a - object ?b - object)
    :precondition (and (not (= ?a ?b)) (surfaces ?b) (or (holds_rh ?c ?a) (holds_lh ?c ?a))
                       (reachable ?c ?b))
    :effect (and (not (holds_rh ?c ?a)) (not (holds_lh ?c ?a)) (not (grabbed ?a))
                 (obj_ontop ?a ?b) (obj_next_to ?a ?b) (obj_next_to ?b ?a) (next_to ?c ?b) (reachable ?c ?b)
                 (forall (?y - object) (when (and (or (obj_ontop ?y ?b) (obj_inside ?y ?b)) (not (= ?y ?a)))
                                             (reach_via ?y ?a)))
                 (sit_full ?b) (lie_full ?b)))

  (:action putin
    :parameters (?c - character ?a - object ?b - object)
    :precondition (and (not (= ?a ?b)) (or (containers ?b) (can_open ?b)) (or (holds_rh ?c ?a) (holds_lh ?c ?a))
                       (or (not (can_open ?b)) (open ?b))
                       (reachable ?c ?b))
    :effect (and (not (holds_rh ?c ?a)) (not (holds_lh ?c ?a)) (not (grabbed ?a))
                 (obj_inside ?a ?b) (obj_next_to ?a ?b) (obj_next_to ?b ?a) (next_to ?c ?b) (reachable ?c ?b)
                 (forall (?y - object) (when (and (or (obj_ontop ?y ?b) (obj_inside ?y ?b)) (not (= ?y ?a)))
                                             (reach_via ?y ?a)))))

  (:action drop
    :parameters (?c - character ?o - object ?r - object)
    :precondition (and (inside ?c ?r) (or (holds_rh ?c ?o) (holds_lh ?c ?o)))
    :effect (and (not (holds_rh ?c ?o)) (not (holds_lh ?c ?o)) (not (grabbed ?o)) (inside_room ?o ?r)))

  (:action put_on_character
    :parameters (?c - character ?o - object)
    :precondition (and (clothes ?o) (or (holds_rh ?c ?o) (holds_lh ?c ?o)))
    :effect (and (on_char ?o ?c) (not (holds_rh ?c ?o)) (not (holds_lh ?c ?o)) (did_puton ?o)))

  (:action switch_on
    :parameters (?c - character ?o - object)
    :precondition (and (has_switch ?o) (off ?o) (not (plugged_out ?o))
                       (reachable ?c ?o))
    :effect (and (on ?o) (not (off ?o)) (did_switchon ?o)))

  (:action switch_off
    :parameters (?c - character ?o - object)
    :precondition (and (has_switch ?o) (on ?o)
                       (reachable ?c ?o))
    :effect (and (off ?o) (not (on ?o)) (did_switchoff ?o)))

  (:action plug_in
    :parameters (?c - character ?o - object)
    :precondition (and (has_plug ?o) (plugged_out ?o)
                       (not (and (exists (?x - object) (holds_rh ?c ?x)) (exists (?x - object) (holds_lh ?c ?x))))
                       (reachable ?c ?o))
    :effect (and (plugged_in ?o) (not (plugged_out ?o))))

  (:action plug_out
    :parameters (?c - character ?o - object)
    :precondition (and (has_plug ?o) (plugged_in ?o) (not (on ?o))
                       (not (and (exists (?x - object) (holds_rh ?c ?x)) (exists (?x - object) (holds_lh ?c ?x))))
                       (reachable ?c ?o))
    :effect (and (plugged_out ?o) (not (plugged_in ?o))))

  (:action turn_to
    :parameters (?c - character ?o - object)
    :precondition (and)
    :effect (and (facing ?c ?o) (forall (?x - object) (when (not (= ?x ?o)) (not (facing ?c ?x))))))

  (:action look_at
    :parameters (?c - character ?o - object)
    :precondition (or (facing ?c ?o) (exists (?x - object) (and (facing ?c ?x) (obj_facing ?x ?o))))
    :effect (did_lookat ?o))

  (:action watch
    :parameters (?c - character ?o - object ?r - object)
    :precondition (and (lookable ?o) (inside ?c ?r) (inside_room ?o ?r) (facing ?c ?o)
                       (not (exists (?b - object) (and (obj_inside ?o ?b) (closed ?b)))))
    :effect (did_watch ?o))

  (:action drink
    :parameters (?c - character ?o - object)
    :precondition (and (or (drinkable ?o) (recipient ?o)) (or (holds_rh ?c ?o) (holds_lh ?c ?o)))
    :effect (did_drink ?o))

  (:action read
    :parameters (?c - character ?o - object)
    :precondition (and (readable ?o) (or (holds_rh ?c ?o) (holds_lh ?c ?o)))
    :effect (did_read ?o))

  (:action touch
    :parameters (?c - character ?o - object)
    :precondition (and (not (exists (?b - object) (and (obj_inside ?o ?b) (closed ?b))))
                       (reachable ?c ?o))
    :effect (did_touch ?o))

  (:action type
    :parameters (?c - character ?o - object)
    :precondition (and (typeable ?o)
                       (reachable ?c ?o))
    :effect (did_type ?o))

  (:action push
    :parameters (?c - character ?o - object)
    :precondition (and (movable ?o) (not (exists (?b - object) (and (obj_inside ?o ?b) (closed ?b))))
                       (not (and (exists (?x - object) (holds_rh ?c ?x)) (exists (?x - object) (holds_lh ?c ?x))))
                       (reachable ?c ?o))
    :effect (did_push ?o))

  (:action wash
    :parameters (?c - character ?o - object)
    :precondition (reachable ?c ?o)
    :effect (did_wash ?o))

  (:action rinse
    :parameters (?c - character ?o - object)
    :precondition (reachable ?c ?o)
    :effect (did_rinse ?o))

  (:action scrub
    :parameters (?c - character ?o - object)
    :precondition (reachable ?c ?o)
    :effect (did_scrub ?o))

  (:action wipe
    :parameters (?c - character ?o - object)
    :precondition (and (or (exists (?x - object) (holds_rh ?c ?x)) (exists (?x - object) (holds_lh ?c ?x)))
                       (reachable ?c ?o))
    :effect (did_wipe ?o))

  (:action pour
    :parameters (?c - character ?a - object ?b - object)
    :precondition (and (not (= ?a ?b)) (or (pourable ?a) (drinkable ?a)) (pour_target ?b)
                       (or (holds_rh ?c ?a) (holds_lh ?c ?a))
                       (reachable ?c ?b))
    ; what stays held loses the INSIDE edge on the next walk, so only released water is modelled in
    :effect (and (did_pour ?a)
                 (when (is_water ?a) (and (obj_inside ?a ?b) (not (holds_rh ?c ?a)) (not (holds_lh ?c ?a))))))

  (:action eat
    :parameters (?c - character ?o - object)
    :precondition (and (eatable ?o)
                       (reachable ?c ?o))
    :effect (did_eat ?o))

  (:action sleep
    :parameters (?c - character)
    :precondition (or (sitting ?c) (lying ?c))
    :effect (did_sleep))

  (:action wakeup
    :parameters (?c - character)
    :precondition (or (sitting ?c) (lying ?c))
    :effect (did_wakeup)))
