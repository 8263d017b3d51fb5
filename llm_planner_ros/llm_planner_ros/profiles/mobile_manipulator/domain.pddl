; A mobile manipulator in a small apartment: it drives between places, picks and places objects,
; opens and closes containers, switches appliances and hands objects over to a person.
; The world profile beside this file (profile.yaml) says which skill each action becomes and
; what its facts are in words.
(define (domain mobile_manipulator)
  (:requirements :strips :typing :negative-preconditions)
  (:types
    place - object            ; somewhere the robot can drive to
    item - object             ; something it can pick up
    container - place         ; a place with a door (fridge, cupboard)
    appliance - place         ; a place with a switch (lamp, kettle, tv)
    person - place            ; someone it can hand an object to
    robot
  )
  (:predicates
    (at ?r - robot ?p - place)
    (holding ?r - robot ?i - item)
    (hand_free ?r - robot)
    (on ?i - item ?p - place)
    (in ?i - item ?c - container)
    (open ?c - container)
    (switched_on ?a - appliance)
    (has ?h - person ?i - item)
  )
  (:action navigate_to
    :parameters (?r - robot ?from - place ?to - place)
    :precondition (and (at ?r ?from) (not (at ?r ?to)))
    :effect (and (at ?r ?to) (not (at ?r ?from))))
  (:action pick
    :parameters (?r - robot ?i - item ?p - place)
    :precondition (and (at ?r ?p) (on ?i ?p) (hand_free ?r))
    :effect (and (holding ?r ?i) (not (hand_free ?r)) (not (on ?i ?p))))
  (:action pick_from
    :parameters (?r - robot ?i - item ?c - container)
    :precondition (and (at ?r ?c) (in ?i ?c) (open ?c) (hand_free ?r))
    :effect (and (holding ?r ?i) (not (hand_free ?r)) (not (in ?i ?c))))
  (:action place
    :parameters (?r - robot ?i - item ?p - place)
    :precondition (and (at ?r ?p) (holding ?r ?i))
    :effect (and (on ?i ?p) (hand_free ?r) (not (holding ?r ?i))))
  (:action place_in
    :parameters (?r - robot ?i - item ?c - container)
    :precondition (and (at ?r ?c) (holding ?r ?i) (open ?c))
    :effect (and (in ?i ?c) (hand_free ?r) (not (holding ?r ?i))))
  (:action open_door
    :parameters (?r - robot ?c - container)
    :precondition (and (at ?r ?c) (hand_free ?r) (not (open ?c)))
    :effect (open ?c))
  (:action close_door
    :parameters (?r - robot ?c - container)
    :precondition (and (at ?r ?c) (hand_free ?r) (open ?c))
    :effect (not (open ?c)))
  (:action switch_on
    :parameters (?r - robot ?a - appliance)
    :precondition (and (at ?r ?a) (not (switched_on ?a)))
    :effect (switched_on ?a))
  (:action switch_off
    :parameters (?r - robot ?a - appliance)
    :precondition (and (at ?r ?a) (switched_on ?a))
    :effect (not (switched_on ?a)))
  (:action hand_over
    :parameters (?r - robot ?i - item ?h - person)
    :precondition (and (at ?r ?h) (holding ?r ?i))
    :effect (and (has ?h ?i) (hand_free ?r) (not (holding ?r ?i))))
)
