; The reference world of the mobile manipulator: the objects of a small apartment and how they
; start. A robot reports its own world over GetWorldState; this file is for the reference skill
; server, dry runs and tests.
(define (problem apartment)
  (:domain mobile_manipulator)
  (:objects
    robot_1 - robot
    kitchen_counter_1 dining_table_1 sofa_1 desk_1 dock_1 - place
    fridge_1 cupboard_1 - container
    kettle_1 lamp_1 tv_1 - appliance
    person_1 - person
    cup_1 mug_1 apple_1 milk_1 book_1 remote_1 phone_1 plate_1 - item
  )
  (:init
    (at robot_1 dock_1) (hand_free robot_1)
    (on cup_1 kitchen_counter_1) (on apple_1 dining_table_1) (on book_1 desk_1)
    (on remote_1 sofa_1) (on phone_1 desk_1)
    (in milk_1 fridge_1) (in mug_1 cupboard_1) (in plate_1 cupboard_1)
  )
  (:goal (and))
)
